/**
 * Backup and restore end to end (issue 17): a backup taken with the real CLI while a task is
 * running (a live database on DATABASE_URL, the real artifact store, candidate repositories and
 * mirrors from real git), restored with the real CLI onto a fresh DATA_DIR and an empty
 * database; then every recorded candidate is re-proved from the restored data alone —
 * rehydration must rebuild every recorded head. Secrets stay out unless asked for.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { advanceTask } from "../jobs/advance-task";
import { createLifecycleWorld, type LifecycleWorld } from "../lifecycle/testing/lifecycle-fixture";
import { runCli } from "../testing/run-cli";
import { createDatabaseBeforeGuestRoundReports } from "../db/testing/before-guest-round-reports";
import { createBackup } from "./create-backup";

let world: LifecycleWorld;
let admin: pg.Client;
const cleanup: string[] = [];
const databases: string[] = [];

async function emptyDatabase(): Promise<string> {
  const name = `restore_${randomBytes(5).toString("hex")}`;
  await admin.query(`create database ${name}`);
  databases.push(name);
  const url = new URL(world.databaseUrl);
  url.pathname = `/${name}`;
  return url.toString();
}

async function tempDir(prefix: string): Promise<string> {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), prefix));
  cleanup.push(dir);
  return dir;
}

beforeAll(async () => {
  world = await createLifecycleWorld();
  const adminUrl = new URL(world.databaseUrl);
  adminUrl.pathname = "/postgres";
  admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
});

afterAll(async () => {
  for (const name of databases) await admin.query(`drop database if exists ${name} with (force)`).catch(() => undefined);
  await admin?.end();
  for (const dir of cleanup) await fs.rm(dir, { recursive: true, force: true });
});

describe("schoolcore backup", () => {
  it("a backup taken mid-run restores onto a fresh DATA_DIR and every candidate is re-proved from it", async () => {
    // One task reaches review (a candidate with artifact, candidate repository and mirror) …
    const reviewed = await world.createDemoTask();
    await advanceTask(world.ctx, reviewed);
    expect((await world.db.task.findUniqueOrThrow({ where: { id: reviewed } })).state).toBe("review_pending");
    await fs.mkdir(path.join(world.env.dataDir, "secrets"), { recursive: true });
    await fs.writeFile(path.join(world.env.dataDir, "secrets", "forge-token"), "forge_secret_value_123456\n", { mode: 0o600 });

    // … and a second one is in flight while the backup is taken.
    const inFlight = await world.createDemoTask();
    const advancing = advanceTask(world.ctx, inFlight);
    for (let i = 0; i < 200; i++) {
      const { state } = await world.db.task.findUniqueOrThrow({ where: { id: inFlight } });
      if (state !== "queued" && state !== "provisioning") break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const out = path.join(await tempDir("schoolcore-backup-out-"), "school.tar.gz");
    const dbEnv = { DATA_DIR: world.env.dataDir, DATABASE_URL: world.databaseUrl };
    const created = await runCli(["backup", "create", "--out", out, "--json"], { env: dbEnv, timeoutMs: 120_000 });
    expect(created.code, created.stderr).toBe(0);
    const backup = JSON.parse(created.stdout) as {
      bytes: number;
      seconds: number;
      rows: number;
      dataEntries: string[];
      secretsIncluded: boolean;
      secretsToReprovide: string[];
    };
    await advancing;
    expect(backup.dataEntries).toEqual(expect.arrayContaining(["artifacts", "candidates", "mirrors"]));
    expect(backup.secretsIncluded).toBe(false);
    expect(backup.secretsToReprovide).toEqual(["secrets"]);
    const listing = execFileSync("tar", ["-tzf", out], { encoding: "utf8" });
    expect(listing).not.toContain("secrets/forge-token");
    expect(listing).not.toMatch(/^postgres\//m);
    expect(((await fs.stat(out)).mode & 0o777).toString(8)).toBe("600");

    // Restore: fresh directory, empty database.
    const restoredDir = await tempDir("schoolcore-restored-");
    const restoredDb = await emptyDatabase();
    const restoreEnv = { DATA_DIR: restoredDir, DATABASE_URL: restoredDb };
    const restored = await runCli(["backup", "restore", out, "--json"], { env: restoreEnv, timeoutMs: 120_000 });
    expect(restored.code, restored.stderr).toBe(0);
    const restoreResult = JSON.parse(restored.stdout) as { rows: number; seconds: number };
    expect(restoreResult.rows).toBe(backup.rows);
    console.log(`backup: ${backup.bytes} bytes, ${backup.rows} rows, create ${backup.seconds}s, restore ${restoreResult.seconds}s`);

    // Start on the restored data and re-prove every candidate it records.
    const target = new pg.Client({ connectionString: restoredDb });
    await target.connect();
    try {
      const { rows: candidates } = await target.query<{ id: string; headSha: string }>(
        `select id, "headSha" from "Candidate" order by "createdAt"`,
      );
      expect(candidates.length).toBeGreaterThanOrEqual(1);
      for (const candidate of candidates) {
        const proved = await runCli(["candidate", "rehydrate", candidate.id, "--json"], { env: restoreEnv, timeoutMs: 120_000 });
        expect(proved.code, proved.stderr).toBe(0);
        expect(JSON.parse(proved.stdout)).toMatchObject({
          verdict: "reproduced",
          candidateId: candidate.id,
          headSha: candidate.headSha,
          rebuiltHeadSha: candidate.headSha,
        });
      }
      // The restored history is the source's, row for row, and ids continue after it.
      const source = await world.db.task.findUniqueOrThrow({ where: { id: reviewed }, include: { transitions: true } });
      const { rows: transitions } = await target.query(`select id from "TaskTransition" where "taskId" = $1`, [reviewed]);
      expect(transitions.length).toBe(source.transitions.length);
    } finally {
      await target.end();
    }
  }, 240_000);

  it("refuses a non-empty DATA_DIR and a database that already has rows, touching neither", async () => {
    const out = path.join(await tempDir("schoolcore-backup-out-"), "b.tar.gz");
    await createBackup({ databaseUrl: world.databaseUrl, dataDir: world.env.dataDir }, { outFile: out, isSecretsIncluded: true });
    expect(execFileSync("tar", ["-tzf", out], { encoding: "utf8" })).toContain("secrets/forge-token");

    const busyDir = await tempDir("schoolcore-busy-");
    await fs.writeFile(path.join(busyDir, "keep.txt"), "mine");
    const intoBusyDir = await runCli(["backup", "restore", out], { env: { DATA_DIR: busyDir, DATABASE_URL: await emptyDatabase() } });
    expect(intoBusyDir.code).not.toBe(0);
    expect(intoBusyDir.stderr).toMatch(/not empty/);
    expect(await fs.readdir(busyDir)).toEqual(["keep.txt"]);

    const intoLiveDb = await runCli(["backup", "restore", out], {
      env: { DATA_DIR: await tempDir("schoolcore-fresh-"), DATABASE_URL: world.databaseUrl },
    });
    expect(intoLiveDb.code).not.toBe(0);
    expect(intoLiveDb.stderr).toMatch(/database is not empty/);

    const notABackup = path.join(busyDir, "keep.txt");
    const refused = await runCli(["backup", "restore", notABackup], {
      env: { DATA_DIR: await tempDir("schoolcore-fresh-"), DATABASE_URL: await emptyDatabase() },
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/not a School-Core backup/);
  });

  it("a backup taken before a migration that moves data is loaded at its own schema, then migrated: the data moves too", async () => {
    // A database as a School-Core from before guest_round_reports left it: a task with its report on the row.
    const oldUrl = await emptyDatabase();
    const legacy = await createDatabaseBeforeGuestRoundReports(oldUrl, [
      { round: 1, guestReport: { untrusted: true, studentSummary: "kept across the restore" } },
    ]);
    const taskId = legacy.taskIds[0];
    const out = path.join(await tempDir("schoolcore-backup-out-"), "old.tar.gz");
    await createBackup({ databaseUrl: oldUrl, dataDir: await tempDir("schoolcore-old-data-") }, { outFile: out, isSecretsIncluded: false });

    const targetUrl = await emptyDatabase();
    const restored = await runCli(["backup", "restore", out, "--json"], {
      env: { DATA_DIR: await tempDir("schoolcore-fresh-"), DATABASE_URL: targetUrl },
    });
    expect(restored.code, restored.stderr).toBe(0);
    expect(JSON.parse(restored.stdout).migrationsAppliedAfter).toEqual(legacy.fromGuestRoundReports);
    const target = new pg.Client({ connectionString: targetUrl });
    await target.connect();
    try {
      const reports = await target.query(`select "taskId", "round", "report" from "GuestRoundReport"`);
      expect(reports.rows).toEqual([{ taskId, round: 1, report: { untrusted: true, studentSummary: "kept across the restore" } }]);
    } finally {
      await target.end();
    }
  }, 120_000);
});
