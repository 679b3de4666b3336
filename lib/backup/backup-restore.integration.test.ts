/**
 * Backup and restore end to end (issue 17): a backup taken with the real CLI while a task is
 * running (a live database on DATABASE_URL, the real artifact store, candidate repositories and
 * mirrors from real git), restored with the real CLI onto a fresh DATA_DIR and an empty
 * database; then every recorded candidate is re-proved from the restored data alone —
 * rehydration must rebuild every recorded head. Secrets stay out unless asked for.
 *
 * And a restore runs only what this installation sealed (issue 27): an archive whose seal does
 * not match its bytes, or whose entries are more than its manifest and its kind allow (a
 * `postgres/` cluster, a link, a secret it says it has not), is refused before DATA_DIR or the
 * database is touched.
 */
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { advanceTask } from "../jobs/advance-task";
import { createLifecycleWorld, type LifecycleWorld } from "../lifecycle/testing/lifecycle-fixture";
import { runCli } from "../testing/run-cli";
import { createDatabaseBeforeGuestRoundReports } from "../db/testing/before-guest-round-reports";
import { BACKUP_KEY_PATH } from "./backup-manifest";
import { ensureBackupKey, writeSealedArchive } from "./backup-seal";
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

const keyFileOf = (dataDir: string) => path.join(dataDir, BACKUP_KEY_PATH);

/** `backup restore` with the real CLI into a DATA_DIR that does not exist yet and an empty database. */
async function restoreWithCli(file: string, keyFile: string) {
  const dataDir = path.join(await tempDir("schoolcore-target-"), "data");
  const databaseUrl = await emptyDatabase();
  const result = await runCli(["backup", "restore", file, "--key-file", keyFile, "--json"], {
    env: { DATA_DIR: dataDir, DATABASE_URL: databaseUrl },
    timeoutMs: 120_000,
  });
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const { rows } = await client.query<{ n: number }>(
    `select count(*)::int as n from information_schema.tables where table_schema not in ('pg_catalog', 'information_schema')`,
  );
  await client.end();
  const error =
    result.code === 0 ? undefined : (JSON.parse(result.stdout) as { error: { code: string; message: string } }).error;
  return { ...result, error, isDataDirWritten: existsSync(dataDir), databaseTables: rows[0]!.n };
}

/** A genuine backup of the world, unpacked, changed by `tamper`, packed and sealed with the world's own key. */
async function resealedBackup(tamper: (unpacked: string) => Promise<void>): Promise<string> {
  const genuine = path.join(await tempDir("schoolcore-genuine-"), "b.tar.gz");
  await createBackup(
    { databaseUrl: world.databaseUrl, dataDir: world.env.dataDir },
    { outFile: genuine, isSecretsIncluded: false },
  );
  const unpacked = await tempDir("schoolcore-unpacked-");
  execFileSync("tar", ["-xzf", genuine, "-C", unpacked]);
  await tamper(unpacked);
  const out = path.join(await tempDir("schoolcore-crafted-"), "crafted.tar.gz");
  const key = await ensureBackupKey(world.env.dataDir);
  const members = await fs.readdir(unpacked);
  const tar = () =>
    spawn("tar", ["--create", "--format=gnu", "--file", "-", "-C", unpacked, ...members], {
      stdio: ["ignore", "pipe", "inherit"],
    }).stdout;
  await writeSealedArchive({ tar, file: out, key });
  return out;
}

beforeAll(async () => {
  world = await createLifecycleWorld();
  const adminUrl = new URL(world.databaseUrl);
  adminUrl.pathname = "/postgres";
  admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
});

afterAll(async () => {
  for (const name of databases)
    await admin.query(`drop database if exists ${name} with (force)`).catch(() => undefined);
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
    await fs.writeFile(path.join(world.env.dataDir, "secrets", "forge-token"), "forge_secret_value_123456\n", {
      mode: 0o600,
    });

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
    const restored = await runCli(["backup", "restore", out, "--key-file", keyFileOf(world.env.dataDir), "--json"], {
      env: restoreEnv,
      timeoutMs: 120_000,
    });
    expect(restored.code, restored.stderr).toBe(0);
    const restoreResult = JSON.parse(restored.stdout) as { rows: number; seconds: number };
    expect(restoreResult.rows).toBe(backup.rows);
    console.log(
      `backup: ${backup.bytes} bytes, ${backup.rows} rows, create ${backup.seconds}s, restore ${restoreResult.seconds}s`,
    );

    // Start on the restored data and re-prove every candidate it records.
    const target = new pg.Client({ connectionString: restoredDb });
    await target.connect();
    try {
      const { rows: candidates } = await target.query<{ id: string; headSha: string }>(
        `select id, "headSha" from "Candidate" order by "createdAt"`,
      );
      expect(candidates.length).toBeGreaterThanOrEqual(1);
      for (const candidate of candidates) {
        const proved = await runCli(["candidate", "rehydrate", candidate.id, "--json"], {
          env: restoreEnv,
          timeoutMs: 120_000,
        });
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
      const { rows: transitions } = await target.query(`select id from "TaskTransition" where "taskId" = $1`, [
        reviewed,
      ]);
      expect(transitions.length).toBe(source.transitions.length);
    } finally {
      await target.end();
    }
  }, 240_000);

  it("refuses a non-empty DATA_DIR and a database that already has rows, touching neither", async () => {
    const out = path.join(await tempDir("schoolcore-backup-out-"), "b.tar.gz");
    await createBackup(
      { databaseUrl: world.databaseUrl, dataDir: world.env.dataDir },
      { outFile: out, isSecretsIncluded: true },
    );
    const listing = execFileSync("tar", ["-tzf", out], { encoding: "utf8" });
    expect(listing).toContain("secrets/forge-token");
    expect(listing).not.toContain(BACKUP_KEY_PATH);
    const keyFile = keyFileOf(world.env.dataDir);

    const busyDir = await tempDir("schoolcore-busy-");
    await fs.writeFile(path.join(busyDir, "keep.txt"), "mine");
    const intoBusyDir = await runCli(["backup", "restore", out, "--key-file", keyFile], {
      env: { DATA_DIR: busyDir, DATABASE_URL: await emptyDatabase() },
    });
    expect(intoBusyDir.code).not.toBe(0);
    expect(intoBusyDir.stderr).toMatch(/not empty/);
    expect(await fs.readdir(busyDir)).toEqual(["keep.txt"]);

    const intoLiveDb = await runCli(["backup", "restore", out, "--key-file", keyFile], {
      env: { DATA_DIR: await tempDir("schoolcore-fresh-"), DATABASE_URL: world.databaseUrl },
    });
    expect(intoLiveDb.code).not.toBe(0);
    expect(intoLiveDb.stderr).toMatch(/database is not empty/);

    const notABackup = path.join(busyDir, "keep.txt");
    const refused = await runCli(["backup", "restore", notABackup, "--key-file", keyFile], {
      env: { DATA_DIR: await tempDir("schoolcore-fresh-"), DATABASE_URL: await emptyDatabase() },
    });
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toMatch(/not a backup sealed with this backup key/);
  });

  it("a backup taken before a migration that moves data is loaded at its own schema, then migrated: the data moves too", async () => {
    // A database as a School-Core from before guest_round_reports left it: a task with its report on the row.
    const oldUrl = await emptyDatabase();
    const legacy = await createDatabaseBeforeGuestRoundReports(oldUrl, [
      { round: 1, guestReport: { untrusted: true, studentSummary: "kept across the restore" } },
    ]);
    const taskId = legacy.taskIds[0];
    const out = path.join(await tempDir("schoolcore-backup-out-"), "old.tar.gz");
    const oldDataDir = await tempDir("schoolcore-old-data-");
    await createBackup({ databaseUrl: oldUrl, dataDir: oldDataDir }, { outFile: out, isSecretsIncluded: false });

    const targetUrl = await emptyDatabase();
    const restored = await runCli(["backup", "restore", out, "--key-file", keyFileOf(oldDataDir), "--json"], {
      env: { DATA_DIR: await tempDir("schoolcore-fresh-"), DATABASE_URL: targetUrl },
    });
    expect(restored.code, restored.stderr).toBe(0);
    expect(JSON.parse(restored.stdout).migrationsAppliedAfter).toEqual(legacy.fromGuestRoundReports);
    const target = new pg.Client({ connectionString: targetUrl });
    await target.connect();
    try {
      const reports = await target.query(`select "taskId", "round", "report" from "GuestRoundReport"`);
      expect(reports.rows).toEqual([
        { taskId, round: 1, report: { untrusted: true, studentSummary: "kept across the restore" } },
      ]);
    } finally {
      await target.end();
    }
  }, 120_000);
});

describe("schoolcore backup restore runs only what this installation sealed", () => {
  it("refuses a sealed archive holding a postgres/ cluster whose postgresql.conf runs a command, writing nothing", async () => {
    const marker = path.join(await tempDir("schoolcore-marker-"), "archive-command-ran");
    const crafted = await resealedBackup(async (dir) => {
      await fs.mkdir(path.join(dir, "postgres"));
      await fs.writeFile(path.join(dir, "postgres", "PG_VERSION"), "17\n");
      await fs.writeFile(
        path.join(dir, "postgres", "postgresql.conf"),
        `archive_mode = on\narchive_command = 'touch ${marker}'\n`,
      );
    });
    const restored = await restoreWithCli(crafted, keyFileOf(world.env.dataDir));
    expect(restored.error?.code, restored.stderr).toBe("BACKUP_ENTRY_REFUSED");
    expect(restored.error?.message).toMatch(/postgres/);
    expect(restored.isDataDirWritten).toBe(false);
    expect(restored.databaseTables).toBe(0);
    expect(existsSync(marker)).toBe(false);
  }, 120_000);

  it("refuses a session-signing secret in a backup whose manifest says it holds no secrets", async () => {
    const crafted = await resealedBackup(async (dir) => {
      await fs.writeFile(path.join(dir, "nextauth-secret"), "attacker-chosen-signing-secret\n");
    });
    const restored = await restoreWithCli(crafted, keyFileOf(world.env.dataDir));
    expect(restored.error?.code, restored.stderr).toBe("BACKUP_ENTRY_REFUSED");
    expect(restored.error?.message).toMatch(/nextauth-secret/);
    expect(restored.isDataDirWritten).toBe(false);
    expect(restored.databaseTables).toBe(0);
  }, 120_000);

  it("refuses a symbolic link entry", async () => {
    const crafted = await resealedBackup(async (dir) => {
      await fs.mkdir(path.join(dir, "artifacts"), { recursive: true });
      await fs.symlink("/etc", path.join(dir, "artifacts", "outside"));
    });
    const restored = await restoreWithCli(crafted, keyFileOf(world.env.dataDir));
    expect(restored.error?.code, restored.stderr).toBe("BACKUP_ENTRY_REFUSED");
    expect(restored.error?.message).toMatch(/symbolic link/);
    expect(restored.isDataDirWritten).toBe(false);
  }, 120_000);

  it("refuses a genuine backup with one byte changed, one with an entry added and re-gzipped, and one under another key, writing nothing", async () => {
    const genuine = path.join(await tempDir("schoolcore-genuine-"), "b.tar.gz");
    await createBackup(
      { databaseUrl: world.databaseUrl, dataDir: world.env.dataDir },
      { outFile: genuine, isSecretsIncluded: false },
    );
    const bytes = await fs.readFile(genuine);

    const flipped = path.join(path.dirname(genuine), "flipped.tar.gz");
    const changed = Buffer.from(bytes);
    changed[Math.floor(changed.length / 2)]! ^= 0x01;
    await fs.writeFile(flipped, changed);

    const added = path.join(path.dirname(genuine), "added.tar.gz");
    const work = await tempDir("schoolcore-added-");
    execFileSync("sh", ["-c", 'gzip -dc "$1" > "$2/b.tar"', "sh", genuine, work]);
    await fs.writeFile(path.join(work, "nextauth-secret"), "attacker-chosen-signing-secret\n");
    execFileSync("tar", ["--append", "--file", path.join(work, "b.tar"), "-C", work, "nextauth-secret"]);
    execFileSync("sh", ["-c", 'gzip -c "$1/b.tar" > "$2"', "sh", work, added]);

    const otherKey = path.join(await tempDir("schoolcore-other-key-"), "backup-key");
    await fs.writeFile(otherKey, "sbk_another_installation_key_0123456789\n", { mode: 0o600 });

    for (const [file, keyFile] of [
      [flipped, keyFileOf(world.env.dataDir)],
      [added, keyFileOf(world.env.dataDir)],
      [genuine, otherKey],
    ] as const) {
      const restored = await restoreWithCli(file, keyFile);
      expect(restored.error?.code, `${path.basename(file)}: ${restored.stderr}`).toBe("BACKUP_UNAUTHENTIC");
      expect(restored.isDataDirWritten).toBe(false);
      expect(restored.databaseTables).toBe(0);
    }
  }, 180_000);
});

describe("schoolcore backup create writes its archive privately", () => {
  it("creates the file 0600 and exclusively: a symlink already at the output path (or at its .partial) is never followed", async () => {
    const attacker = await tempDir("schoolcore-attacker-");
    const outDir = await tempDir("schoolcore-backup-out-");
    await fs.chmod(outDir, 0o777);

    // A symlink planted where the archive goes is refused, and what it points at is never written.
    const out = path.join(outDir, "school.tar.gz");
    const target = path.join(attacker, "stolen.tar.gz");
    await fs.symlink(target, out);
    await expect(
      createBackup(
        { databaseUrl: world.databaseUrl, dataDir: world.env.dataDir },
        { outFile: out, isSecretsIncluded: false },
      ),
    ).rejects.toMatchObject({ code: "STATE_CONFLICT" });
    expect(existsSync(target)).toBe(false);

    // A symlink planted at the obvious temporary name is not followed either.
    const second = path.join(outDir, "second.tar.gz");
    const readable = path.join(attacker, "readable");
    await fs.writeFile(readable, "", { mode: 0o666 });
    await fs.symlink(readable, `${second}.partial`);
    await createBackup(
      { databaseUrl: world.databaseUrl, dataDir: world.env.dataDir },
      { outFile: second, isSecretsIncluded: false },
    );
    expect((await fs.readFile(readable)).length).toBe(0);
    const written = await fs.lstat(second);
    expect(written.isFile()).toBe(true);
    expect((written.mode & 0o777).toString(8)).toBe("600");
    expect((await fs.stat(keyFileOf(world.env.dataDir))).mode & 0o777).toBe(0o600);
  }, 120_000);
});
