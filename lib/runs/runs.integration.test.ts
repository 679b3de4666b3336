/**
 * The background-run kernel on real PostgreSQL, for each kind's real table: a claim is exclusive
 * (of two claimers at once exactly one gets the run), a move the kind's table forbids is refused
 * before the database is asked, a run whose heartbeat lapsed (or never beat) is swept to failed
 * with the kind's visible reason and an audit row while a fresh one is left alone, a runner that
 * beats between the sweep's listing and its update keeps its run, and a heartbeat tells its runner
 * when the run stopped being running (an operator cancelled it).
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../db/client";
import { isAppError } from "../errors";
import { createTestDatabase } from "../testing/test-database";
import { beatRun, keepRunAlive } from "./run-heartbeat";
import { claimRun } from "./run-queue";
import { RUN_HEARTBEAT_STALE_MS, RUN_KINDS, type TQueuedRunKind, type TRunKind } from "./run-states";
import { sweepAbandonedRuns } from "./sweep-abandoned-runs";
import { transitionRun } from "./transition-run";

let db: Db;
let repositoryId: string;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  repositoryId = (
    await db.targetRepository.create({ data: { name: `kernel/${randomUUID()}`, cloneUrl: "file:///nowhere" } })
  ).id;
});

type TRowInput = { state: "queued" | "running"; heartbeatAt?: Date | null; startedAt?: Date };

/** One row of `kind` in `state`, made as its own code would (the columns each table requires). */
async function makeRun(kind: TRunKind, input: TRowInput): Promise<string> {
  const { state, heartbeatAt = null, startedAt = new Date() } = input;
  if (kind === "probe-run")
    return (
      await db.probeRun.create({
        data: { probes: ["P0"], substrate: "local", configDigest: "d", config: {}, state, heartbeatAt, startedAt },
      })
    ).id;
  if (kind === "setup-run")
    return (
      await db.dependencySetupRun.create({
        data: {
          repositoryId,
          reason: "kernel test",
          sourceSha: "a".repeat(40),
          recipe: {},
          recipeDigest: "r",
          lockfileDigest: "l",
          imageDigest: "i",
          state,
          heartbeatAt,
          startedAt,
        },
      })
    ).id;
  return (await db.bundleBuildRequest.create({ data: { repositoryId, kind: "base", state, heartbeatAt, startedAt } }))
    .id;
}

async function readRun(kind: TRunKind, id: string) {
  if (kind === "probe-run") {
    const row = await db.probeRun.findUniqueOrThrow({ where: { id } });
    return { ...row, visibleReason: row.reason };
  }
  if (kind === "setup-run") {
    const row = await db.dependencySetupRun.findUniqueOrThrow({ where: { id } });
    return { ...row, visibleReason: row.errorSummary };
  }
  const row = await db.bundleBuildRequest.findUniqueOrThrow({ where: { id } });
  return { ...row, visibleReason: row.errorSummary };
}

/** The kind's reason column, as each kind's own sweep writes it. */
function reasonData(kind: TRunKind, reason: string) {
  return kind === "probe-run" ? { reason } : { errorCode: "DEPENDENCY_SETUP_FAILED", errorSummary: reason };
}

const sweep = (kind: TRunKind, now: Date, beforeMove?: (id: string) => Promise<unknown>) =>
  sweepAbandonedRuns(db, {
    kind,
    now,
    abandon: async (run, reason) => {
      await beforeMove?.(run.id);
      return {
        data: reasonData(kind, `abandoned: ${reason}`),
        audit: { actorId: null, action: "kernel-test.abandoned", targetType: kind, targetId: run.id },
      };
    },
  });

const QUEUED_KINDS: TQueuedRunKind[] = ["probe-run", "bundle-build"];
const KINDS = Object.keys(RUN_KINDS) as TRunKind[];

describe.each(QUEUED_KINDS)("claiming a queued %s", (kind) => {
  it("is exclusive: of two claimers at once exactly one gets it, every time", async () => {
    for (let round = 0; round < 10; round++) {
      const id = await makeRun(kind, { state: "queued" });
      const audit = { actorId: null, action: "kernel-test.claimed", targetType: kind, targetId: id };
      const claims = await Promise.all([claimRun(db, { kind, id, audit }), claimRun(db, { kind, id, audit })]);
      expect(claims.filter(Boolean)).toHaveLength(1);
      const run = await readRun(kind, id);
      expect(run.state).toBe("running");
      expect(run.heartbeatAt).not.toBeNull();
      expect(run.startedAt).toEqual(run.heartbeatAt);
      // the winner's audit row only: the loser's transaction wrote nothing
      expect(await db.auditLog.count({ where: { action: "kernel-test.claimed", targetId: id } })).toBe(1);
      // and a claim of a run that is not queued any more leaves it as it is
      expect(await claimRun(db, { kind, id })).toBe(false);
    }
  });
});

describe("a move the kind's table forbids", () => {
  it("is refused as STATE_CONFLICT before the row is touched", async () => {
    const id = await makeRun("setup-run", { state: "running", heartbeatAt: new Date() });
    const refusal = await transitionRun(db, { kind: "setup-run", id, from: "running", to: "queued" }).catch(
      (e: unknown) => e,
    );
    expect(isAppError(refusal) && refusal.code).toBe("STATE_CONFLICT");
    expect((await readRun("setup-run", id)).state).toBe("running");
    const probe = await makeRun("probe-run", { state: "running", heartbeatAt: new Date() });
    await expect(transitionRun(db, { kind: "probe-run", id: probe, from: "running", to: "queued" })).rejects.toThrow(
      /Illegal/,
    );
  });

  it("and an ended run never moves again (a failed run does not succeed)", async () => {
    const id = await makeRun("bundle-build", { state: "running", heartbeatAt: new Date() });
    expect(await transitionRun(db, { kind: "bundle-build", id, from: "running", to: "failed" })).toBe(true);
    expect((await readRun("bundle-build", id)).finishedAt).not.toBeNull();
    await expect(transitionRun(db, { kind: "bundle-build", id, from: "failed", to: "succeeded" })).rejects.toThrow(
      /Illegal/,
    );
    // a runner that still thinks it is running loses the race quietly
    expect(await transitionRun(db, { kind: "bundle-build", id, from: "running", to: "succeeded" })).toBe(false);
    expect((await readRun("bundle-build", id)).state).toBe("failed");
  });
});

describe.each(KINDS)("the abandon sweep of %s", (kind) => {
  it("fails a run whose heartbeat lapsed, or that never beat, with a visible reason and an audit row; leaves a fresh one", async () => {
    const now = new Date();
    const lapsed = new Date(now.getTime() - RUN_HEARTBEAT_STALE_MS - 1_000);
    const dead = await makeRun(kind, { state: "running", heartbeatAt: lapsed, startedAt: lapsed });
    const neverBeat = await makeRun(kind, { state: "running", heartbeatAt: null, startedAt: lapsed });
    const alive = await makeRun(kind, {
      state: "running",
      heartbeatAt: new Date(now.getTime() - RUN_HEARTBEAT_STALE_MS + 2_000),
    });

    expect((await sweep(kind, now)).sort()).toEqual([dead, neverBeat].sort());
    for (const id of [dead, neverBeat]) {
      const run = await readRun(kind, id);
      expect(run.state).toBe("failed");
      expect(run.visibleReason).toMatch(/abandoned: the process running it stopped/);
      expect(run.finishedAt).toEqual(now);
      expect(await db.auditLog.count({ where: { action: "kernel-test.abandoned", targetId: id } })).toBe(1);
    }
    const live = await readRun(kind, alive);
    expect(live.state).toBe("running");
    expect(live.visibleReason).toBeNull();
    // idempotent: nothing more to sweep, and the failed runs keep their one audit row
    expect(await sweep(kind, now)).toEqual([]);
    await transitionRun(db, { kind, id: alive, from: "running", to: "failed" });
  });

  it("leaves a run whose runner beat after the sweep listed it", async () => {
    const lapsed = new Date(Date.now() - RUN_HEARTBEAT_STALE_MS - 1_000);
    const id = await makeRun(kind, { state: "running", heartbeatAt: lapsed, startedAt: lapsed });
    const swept = await sweep(kind, new Date(), (listed) =>
      listed === id ? beatRun(db, { kind, id }) : Promise.resolve(),
    );
    expect(swept).not.toContain(id);
    expect((await readRun(kind, id)).state).toBe("running");
    await transitionRun(db, { kind, id, from: "running", to: "failed" });
  });
});

describe("a running run's heartbeat", () => {
  it("refreshes the run, and tells its runner once when the run stops being running (an operator cancelled it)", async () => {
    const id = await makeRun("bundle-build", { state: "running", heartbeatAt: new Date(Date.now() - 10_000) });
    const before = (await readRun("bundle-build", id)).heartbeatAt!;
    let stops = 0;
    const heartbeat = keepRunAlive(db, { kind: "bundle-build", id }, { onStopped: () => (stops += 1) });
    try {
      await waitFor(async () => (await readRun("bundle-build", id)).heartbeatAt! > before);
      expect(stops).toBe(0);
      expect(await transitionRun(db, { kind: "bundle-build", id, from: "running", to: "cancelled" })).toBe(true);
      await waitFor(async () => stops > 0);
      // a few more beats: still told only once
      await new Promise((resolve) => setTimeout(resolve, RUN_KINDS["bundle-build"].heartbeatMs * 2.5));
      expect(stops).toBe(1);
    } finally {
      heartbeat.stop();
    }
  });
});

async function waitFor(condition: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
