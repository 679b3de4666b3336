/**
 * Liveness of a running background run. The process running it refreshes the run's heartbeat at
 * its kind's interval (run-states.ts); when that process dies (worker SIGKILLed, CLI killed) the
 * beats stop and the sweep (sweep-abandoned-runs.ts) fails the run — it never stays "running"
 * for ever, and never turns into a success. A beat also tells the runner whether the run is
 * still running: once an operator cancelled it (or the sweep failed it), the runner stops.
 */
import type { Db } from "../db/client";
import { logWarn } from "../log";
import { RUN_KINDS, type TRunKind } from "./run-states";
import { runTable } from "./run-table";

/** One beat; false when the run is no longer running (cancelled, failed by the sweep, ended). */
export async function beatRun(db: Db, run: { kind: TRunKind; id: string }, now = new Date()): Promise<boolean> {
  const beaten = await runTable(db, run.kind).updateMany({
    where: { id: run.id, state: "running" },
    data: { heartbeatAt: now },
  });
  return beaten.count === 1;
}

export type TRunHeartbeat = { stop(): void };

/**
 * Beats at the kind's interval until stopped. `onStopped` is called once, at the first beat that
 * finds the run no longer running. A failed beat (the database briefly unreachable) is logged and
 * the next one tried: only a run whose beats stop for the stale threshold is abandoned.
 */
export function keepRunAlive(
  db: Db,
  run: { kind: TRunKind; id: string },
  options: { onStopped?: () => void } = {},
): TRunHeartbeat {
  let hasStopped = false;
  const timer = setInterval(() => {
    void beatRun(db, run).then(
      (isRunning) => {
        if (isRunning || hasStopped) return;
        hasStopped = true;
        options.onStopped?.();
      },
      (error: unknown) => logWarn("a run's heartbeat failed", { kind: run.kind, id: run.id, error: String(error) }),
    );
  }, RUN_KINDS[run.kind].heartbeatMs);
  return { stop: () => clearInterval(timer) };
}
