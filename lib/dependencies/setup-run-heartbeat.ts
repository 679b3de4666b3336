/**
 * Liveness of a dependency setup run and of an operator's build request. The process running one
 * refreshes its heartbeat; when that process dies (worker SIGKILLed, CLI killed) the row would say
 * "running" for ever, and a builder machine whose run is running is never reaped. The worker's
 * sweep fails every such row whose heartbeat lapsed, with a reason saying so — never "succeeded".
 */
import type { Db } from "../db/client";
import { recordAudit } from "../audit";

export const SETUP_RUN_HEARTBEAT_MS = 5_000;
/** Six missed beats: a busy event loop is not a dead process. */
export const SETUP_RUN_STALE_MS = 30_000;

export const ABANDONED_REASON = "the process running it stopped (killed or crashed) before it finished";

export async function beatSetupRun(db: Db, runId: string): Promise<void> {
  await db.dependencySetupRun.updateMany({ where: { id: runId, state: "running" }, data: { heartbeatAt: new Date() } });
}

/** Fails running setup runs whose heartbeat lapsed; the machine sweep then reaps their builders. */
export async function failAbandonedSetupRuns(db: Db, now = new Date()): Promise<string[]> {
  const staleBefore = new Date(now.getTime() - SETUP_RUN_STALE_MS);
  const stale = await db.dependencySetupRun.findMany({
    // a run from before heartbeats (null) counts from its start
    where: { state: "running", OR: [{ heartbeatAt: { lt: staleBefore } }, { heartbeatAt: null, startedAt: { lt: staleBefore } }] },
    select: { id: true, repositoryId: true, startedAt: true },
  });
  const failed: string[] = [];
  for (const run of stale) {
    await db.$transaction(async (tx) => {
      const updated = await tx.dependencySetupRun.updateMany({
        where: { id: run.id, state: "running" },
        data: {
          state: "failed",
          errorCode: "DEPENDENCY_SETUP_FAILED",
          errorSummary: `The setup run was abandoned: ${ABANDONED_REASON}.`,
          durationMs: Math.max(0, now.getTime() - run.startedAt.getTime()),
          finishedAt: now,
        },
      });
      if (updated.count !== 1) return;
      await recordAudit(tx, {
        actorId: null,
        action: "dependencies.setup.abandoned",
        targetType: "repository",
        targetId: run.repositoryId,
        detail: { setupRunId: run.id },
      });
      failed.push(run.id);
    });
  }
  return failed;
}
