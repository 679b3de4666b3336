/**
 * The work-ready channel (lib/db/work-ready.ts) as the worker's real listener hears it, on real
 * PostgreSQL: a committed announcement of each kind arrives with its kind and id; a rolled-back one
 * never does; an operator's qualification run is announced by the transaction that records it,
 * one the caller runs itself (the CLI) is not; and a payload that is not exactly a version-1
 * (kind, id) — sent by anyone who can reach the database — is ignored, never acted on.
 */
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { notifyWorkReady, WORK_READY_CHANNEL, type TWorkReady } from "../db/work-ready";
import { parseEnv } from "../env";
import { requestProbeRun } from "../probes/request-probe-run";
import { createTestDatabase, type TestDatabase } from "../testing/test-database";
import { listenForReadyWork, type TWorkReadyListener } from "./listen-work-ready";

let database: TestDatabase;
let listener: TWorkReadyListener;
const heard: TWorkReady[] = [];

beforeAll(async () => {
  database = await createTestDatabase();
  listener = await listenForReadyWork({ databaseUrl: database.url, onReady: (work) => heard.push(work) });
});

afterAll(async () => {
  await listener?.close();
});

/** Waits until `id` is heard; a later committed marker proves the channel delivered meanwhile. */
async function heardOf(id: string, ms = 5000): Promise<TWorkReady | undefined> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await new Promise((r) => setTimeout(r, 25))) {
    const found = heard.find((work) => work.id === id);
    if (found) return found;
  }
  return heard.find((work) => work.id === id);
}

async function marker(): Promise<void> {
  const id = randomUUID();
  await notifyWorkReady(database.db, { kind: "task", id });
  expect(await heardOf(id)).toBeDefined();
}

describe("the work-ready channel", () => {
  it("delivers each kind of committed announcement with its kind and id", async () => {
    for (const kind of ["task", "bundle-build", "probe-run"] as const) {
      const id = randomUUID();
      await database.db.$transaction((tx) => notifyWorkReady(tx, { kind, id }));
      expect(await heardOf(id)).toEqual({ kind, id });
    }
  });

  it("never delivers an announcement whose transaction rolled back", async () => {
    const id = randomUUID();
    await expect(
      database.db.$transaction(async (tx) => {
        await notifyWorkReady(tx, { kind: "bundle-build", id });
        throw new Error("rolled back");
      }),
    ).rejects.toThrow("rolled back");
    await marker();
    expect(heard.some((work) => work.id === id)).toBe(false);
  });

  it("announces an operator's qualification run in its own transaction, and not one the caller runs itself", async () => {
    const env = parseEnv({ ...process.env, DATABASE_URL: database.url });
    const forWorker = await requestProbeRun({ db: database.db, env }, { probes: ["P1"], actor: null });
    expect(await heardOf(forWorker.id)).toEqual({ kind: "probe-run", id: forWorker.id });
    const byCaller = await requestProbeRun(
      { db: database.db, env },
      { probes: ["P1"], actor: null, isRunByCaller: true },
    );
    await marker();
    expect(heard.some((work) => work.id === byCaller.id)).toBe(false);
  });

  it("ignores payloads that are not exactly a version-1 (kind, id)", async () => {
    const before = heard.length;
    const id = randomUUID();
    for (const payload of [
      id, // the old bare task id
      JSON.stringify({ v: 2, kind: "task", id }),
      JSON.stringify({ v: 1, kind: "shell", id }),
      JSON.stringify({ v: 1, kind: "task", id: "../../etc/passwd" }),
      JSON.stringify({ v: 1, kind: "task", id, command: "rm -rf /" }),
      "{not json",
      "x".repeat(7000),
    ]) {
      await database.db.$executeRaw`SELECT pg_notify(${WORK_READY_CHANNEL}, ${payload})`;
    }
    await marker();
    expect(heard.length).toBe(before + 1);
  });
});
