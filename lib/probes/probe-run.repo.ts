/**
 * ProbeRun and ProbeResult rows: the only code that touches them. A run is a background run of
 * kind "probe-run" (lib/runs: its transition table, claim, heartbeat and the abandon sweep), `queued`
 * → `running` → `passed` | `failed`; its results are `pending` → `running` → `passed` | `failed` |
 * `error`. Every state change is a compare-and-set; a run whose runner died (heartbeat lapsed) is
 * failed, never left looking as if it might pass.
 */
import { z } from "zod";
import type { Prisma } from "../db/generated/client";
import type { Db, DbTx } from "../db/client";
import { recordAudit } from "../audit";
import { AppError } from "../errors";
import { announceQueuedRun } from "../runs/run-queue";
import { sweepAbandonedRuns } from "../runs/sweep-abandoned-runs";
import { transitionRunIn } from "../runs/transition-run";
import type { TGuestImage } from "../contract/guest-image";
import type { TSubstrateConfigSnapshot } from "../settings/substrate-config";
import type { TProbeId } from "./probe-registry";
import type { TGateRun } from "./dispatch-gate";

export type TProbeResultStatus = "pending" | "running" | "passed" | "failed" | "error";

export async function createProbeRun(
  db: Db,
  input: {
    probes: TProbeId[];
    substrate: string;
    snapshot: TSubstrateConfigSnapshot;
    actorId: string | null;
    isRunByCaller?: boolean;
    /** the guest image the snapshot carries in place of guest.image, and the agent profile it is for */
    guestImageOverride?: { image: TGuestImage; profile: string | null };
  },
) {
  return db.$transaction(async (tx) => {
    const run = await tx.probeRun.create({
      data: {
        probes: input.probes,
        substrate: input.substrate,
        configDigest: input.snapshot.digest,
        config: input.snapshot.config as Prisma.InputJsonValue,
        ...(input.guestImageOverride ? { guestImageOverride: input.guestImageOverride.image } : {}),
        createdById: input.actorId,
        results: { create: input.probes.map((probe) => ({ probe })) },
      },
    });
    await recordAudit(tx, {
      actorId: input.actorId,
      action: "probe.run",
      targetType: "probeRun",
      targetId: run.id,
      detail: {
        probes: input.probes,
        configDigest: input.snapshot.digest,
        substrate: input.substrate,
        ...(input.guestImageOverride
          ? { guestImage: input.guestImageOverride.image, agentProfile: input.guestImageOverride.profile }
          : {}),
      },
    });
    // A worker starts it at once (lib/db/work-ready.ts), unless the caller runs it (the CLI).
    if (!input.isRunByCaller) await announceQueuedRun(tx, { kind: "probe-run", id: run.id });
    return run;
  });
}

export async function markProbeStarted(db: Db, runId: string, probe: TProbeId): Promise<void> {
  await db.probeResult.updateMany({
    where: { runId, probe, status: "pending" },
    data: { status: "running", startedAt: new Date() },
  });
}

export async function recordProbeResult(
  db: Db,
  runId: string,
  probe: TProbeId,
  result: { status: "passed" | "failed" | "error"; durationMs: number; detail: unknown; providerError?: string },
): Promise<void> {
  const updated = await db.probeResult.updateMany({
    where: { runId, probe, status: "running" },
    data: {
      status: result.status,
      durationMs: result.durationMs,
      detail: result.detail as Prisma.InputJsonValue,
      providerError: result.providerError ?? null,
      finishedAt: new Date(),
    },
  });
  if (updated.count !== 1) throw new AppError("STATE_CONFLICT", `Probe ${probe} of run ${runId} is not running.`);
}

/** running → passed only when every selected probe passed; anything else → failed with the reason. */
export async function finishProbeRun(
  db: Db,
  runId: string,
  input: { evidenceDigest: string | null; reason: string | null },
): Promise<"passed" | "failed"> {
  return db.$transaction(async (tx) => {
    const results = await tx.probeResult.findMany({ where: { runId } });
    const isPass =
      results.length > 0 &&
      results.every((r) => r.status === "passed") &&
      input.evidenceDigest !== null &&
      input.reason === null;
    const state = isPass ? "passed" : "failed";
    const notPassed = results.filter((r) => r.status !== "passed").map((r) => `${r.probe} ${r.status}`);
    const reason = input.reason ?? (isPass ? null : `not passed: ${notPassed.join(", ")}`);
    const isMoved = await transitionRunIn(tx, {
      kind: "probe-run",
      id: runId,
      from: "running",
      to: state,
      data: { evidenceDigest: input.evidenceDigest, reason },
      audit: {
        actorId: null,
        action: "probe.finish",
        targetType: "probeRun",
        targetId: runId,
        detail: { state, evidenceDigest: input.evidenceDigest, reason },
      },
      alsoIn: (inTx) => endUnfinishedResults(inTx, runId, reason ?? "the run ended first", new Date()),
    });
    // The sweep failed it meanwhile (its heartbeat lapsed): it stays failed, never passes.
    if (!isMoved) throw new AppError("STATE_CONFLICT", `Probe run ${runId} is not running.`);
    return state;
  });
}

/** Probes the run left pending or running become `error`: they never ran to a verdict. */
async function endUnfinishedResults(tx: DbTx, runId: string, reason: string, now: Date) {
  await tx.probeResult.updateMany({
    where: { runId, status: { in: ["pending", "running"] } },
    data: { status: "error", detail: { reason }, finishedAt: now },
  });
}

/**
 * A run whose runner died (worker SIGKILL, CLI killed) is failed by the kernel's sweep, never
 * "passed", with its reason; probes it left pending or running become `error`.
 */
export async function failAbandonedProbeRuns(db: Db, now = new Date()): Promise<string[]> {
  return sweepAbandonedRuns(db, {
    kind: "probe-run",
    now,
    abandon: (run, reason) => ({
      data: { reason: `The run was abandoned: ${reason}.` },
      audit: {
        actorId: null,
        action: "probe.abandoned",
        targetType: "probeRun",
        targetId: run.id,
        detail: { reason: "heartbeat lapsed" },
      },
      alsoIn: (tx) => endUnfinishedResults(tx, run.id, "the run was abandoned: its runner stopped", now),
    }),
  });
}

const RUN_INCLUDE = { results: { orderBy: { probe: "asc" } } } as const satisfies Prisma.ProbeRunInclude;

export async function getProbeRunOrThrow(deps: { db: Db | DbTx }, input: { runId: string }) {
  const { db } = deps;
  const { runId } = input;
  if (!z.uuid().safeParse(runId).success) throw new AppError("NOT_FOUND", `No probe run ${runId.slice(0, 40)}.`);
  const run = await db.probeRun.findUnique({ where: { id: runId }, include: RUN_INCLUDE });
  if (!run) throw new AppError("NOT_FOUND", `No probe run ${runId}.`);
  return run;
}

export async function listProbeRuns(deps: { db: Db }, input: { take?: number } = {}) {
  return deps.db.probeRun.findMany({ orderBy: { createdAt: "desc" }, take: input.take ?? 20, include: RUN_INCLUDE });
}

export type TProbeRunView = Awaited<ReturnType<typeof getProbeRunOrThrow>>;

function toGateRun(run: TProbeRunView): TGateRun {
  return {
    id: run.id,
    state: run.state,
    substrate: run.substrate,
    configDigest: run.configDigest,
    results: run.results,
    finishedAt: run.finishedAt,
  };
}

/** The latest completed (passed or failed) run for this digest, or null. */
export async function latestCompletedRunFor(db: Db | DbTx, configDigest: string): Promise<TGateRun | null> {
  const run = await db.probeRun.findFirst({
    where: { configDigest, state: { in: ["passed", "failed"] } },
    orderBy: [{ finishedAt: "desc" }, { createdAt: "desc" }],
    include: RUN_INCLUDE,
  });
  return run ? toGateRun(run) : null;
}
