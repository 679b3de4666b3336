/**
 * Migration runs_kernel turns the setup run's and the build request's text state into the
 * RunState enum in place: every existing row keeps its state (Prisma's own diff would have dropped
 * the column), a running row from before heartbeats gets its start as its last beat (so the
 * kernel's sweep judges it from its start, as the old sweep did), and a value outside the enum
 * stops the migration with nothing changed rather than being guessed.
 */
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { applyMigrations } from "../db/migrations";
import { createDatabaseBeforeRunsKernel } from "./testing/before-runs-kernel";

let admin: pg.Client;
const created: string[] = [];

beforeAll(async () => {
  const adminUrl = new URL(inject("templateDatabaseUrl"));
  adminUrl.pathname = "/postgres";
  admin = new pg.Client({ connectionString: adminUrl.toString() });
  await admin.connect();
});

afterAll(async () => {
  for (const name of created) await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
});

async function emptyDatabase(): Promise<string> {
  const name = `m_${randomBytes(6).toString("hex")}`;
  await admin.query(`create database ${name}`);
  created.push(name);
  const url = new URL(inject("templateDatabaseUrl"));
  url.pathname = `/${name}`;
  return url.toString();
}

async function query(url: string, sql: string, values: unknown[] = []) {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql, values)).rows;
  } finally {
    await client.end();
  }
}

describe("migration runs_kernel", () => {
  it("keeps every row's state, as the enum, and gives a running row without a heartbeat its start", async () => {
    const url = await emptyDatabase();
    const startedAt = new Date("2026-11-30T10:00:00.000Z");
    const beat = new Date("2026-11-30T10:05:00.000Z");
    const states = ["queued", "running", "succeeded", "failed", "cancelled"];
    const legacy = await createDatabaseBeforeRunsKernel(url, [
      ...states.map((state) => ({ state, heartbeatAt: beat, startedAt })),
      { state: "running", heartbeatAt: null, startedAt },
      { state: "failed", heartbeatAt: null, startedAt },
    ]);
    await applyMigrations(url, undefined, { only: [...legacy.before, legacy.runsKernel] });

    for (const table of ["DependencySetupRun", "BundleBuildRequest"]) {
      const ids = table === "DependencySetupRun" ? legacy.setupRunIds : legacy.requestIds;
      const rows = await query(
        url,
        `select id, state::text as state, "heartbeatAt" from "${table}" where id = any($1::uuid[])`,
        [ids],
      );
      const byId = new Map(rows.map((r) => [r.id as string, r]));
      expect(ids.map((id) => byId.get(id)?.state)).toEqual([...states, "running", "failed"]);
      expect(ids.slice(0, states.length).map((id) => byId.get(id)?.heartbeatAt)).toEqual(states.map(() => beat));
      // the running one without a heartbeat now counts from its start; an ended one is left as it was
      expect(byId.get(ids[states.length]!)?.heartbeatAt).toEqual(startedAt);
      expect(byId.get(ids[states.length + 1]!)?.heartbeatAt).toBeNull();
      const [column] = await query(
        url,
        `select udt_name, column_default from information_schema.columns where table_name = $1 and column_name = 'state'`,
        [table],
      );
      expect(column).toEqual({
        udt_name: "RunState",
        column_default: table === "DependencySetupRun" ? `'running'::"RunState"` : `'queued'::"RunState"`,
      });
    }
  });

  it("stops, changing nothing, on a state outside the enum", async () => {
    const url = await emptyDatabase();
    const legacy = await createDatabaseBeforeRunsKernel(url, [
      { state: "exploded", heartbeatAt: null, startedAt: new Date() },
    ]);
    await expect(applyMigrations(url, undefined, { only: [...legacy.before, legacy.runsKernel] })).rejects.toThrow(
      /state outside RunState/,
    );
    const [row] = await query(
      url,
      `select state, pg_typeof(state)::text as type from "DependencySetupRun" where id = $1`,
      [legacy.setupRunIds[0]],
    );
    expect(row).toEqual({ state: "exploded", type: "text" });
    // the statements before the failing cast did not stay either: no enum type, the old default
    expect(await query(url, `select 1 from pg_type where typname = 'RunState'`)).toEqual([]);
    const [column] = await query(
      url,
      `select column_default from information_schema.columns where table_name = 'DependencySetupRun' and column_name = 'state'`,
    );
    expect(column).toEqual({ column_default: "'running'::text" });
  });
});
