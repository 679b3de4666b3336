/**
 * A dependency setup run whose process died (worker SIGKILLed, CLI killed) would say "running"
 * for ever, and a builder machine whose run is running is never reaped. The kernel's sweep
 * (lib/runs/sweep-abandoned-runs.ts) fails every such run once its heartbeat lapsed; this says how
 * that reads on a setup run — never "succeeded" — and the machine sweep then reaps its builder.
 */
import type { Db } from "../db/client";
import { sweepAbandonedRuns } from "../runs/sweep-abandoned-runs";

export async function failAbandonedSetupRuns(db: Db, now = new Date()): Promise<string[]> {
  return sweepAbandonedRuns(db, {
    kind: "setup-run",
    now,
    abandon: (run, reason) => ({
      data: {
        errorCode: "DEPENDENCY_SETUP_FAILED",
        errorSummary: `The setup run was abandoned: ${reason}.`,
        durationMs: Math.max(0, now.getTime() - run.startedAt.getTime()),
      },
      audit: {
        actorId: null,
        action: "dependencies.setup.abandoned",
        // an agent profile's code (issue 26) has no repository: its run names the code's digest
        targetType: run.repositoryId ? "repository" : "agent_code",
        targetId: run.repositoryId ?? run.sourceSha,
        detail: { setupRunId: run.id },
      },
    }),
  });
}
