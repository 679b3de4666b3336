/**
 * The abandon sweep, one for every kind of background run: a run still `running` whose heartbeat
 * lapsed (none for RUN_HEARTBEAT_STALE_MS, or none at all) had its process die, and is failed —
 * with a reason the operator sees, an audit row and whatever the kind must end with it, in one
 * transaction each — never left running, never turned into a success. The kind says how the
 * failure reads in its own columns; the kernel decides which runs are abandoned and moves them.
 * Idempotent: a run the sweep (or its runner) moved meanwhile is skipped.
 */
import type { TAuditEntry } from "../audit";
import type { Db, DbTx } from "../db/client";
import { ABANDONED_REASON, RUN_HEARTBEAT_STALE_MS, type TRunKind } from "./run-states";
import { runTable, type TRunData, type TRunRecord } from "./run-table";
import { transitionRun } from "./transition-run";

export type TAbandonment<K extends TRunKind> = {
  /** the kind's reason and outcome columns, saying the run was abandoned (`reason` is ABANDONED_REASON) */
  data: TRunData<K>;
  audit: TAuditEntry;
  alsoIn?: (tx: DbTx) => Promise<unknown>;
};

/** A heartbeat that lapsed at `now`, or none at all. */
function staleAt(now: Date) {
  const staleBefore = new Date(now.getTime() - RUN_HEARTBEAT_STALE_MS);
  return { OR: [{ heartbeatAt: null }, { heartbeatAt: { lt: staleBefore } }] };
}

/** The running runs of `kind` whose heartbeat lapsed at `now` (a run without one is stale at once). */
export async function listAbandonedRuns<K extends TRunKind>(
  db: Db,
  kind: K,
  now = new Date(),
): Promise<TRunRecord<K>[]> {
  const rows = await runTable(db, kind).findMany({ where: { state: "running", ...staleAt(now) } });
  return rows as TRunRecord<K>[];
}

/** Fails every abandoned run of `kind` as the kind's `abandon` describes it; returns their ids. */
export async function sweepAbandonedRuns<K extends TRunKind>(
  db: Db,
  input: {
    kind: K;
    now?: Date;
    abandon: (run: TRunRecord<K>, reason: string, now: Date) => TAbandonment<K> | Promise<TAbandonment<K>>;
  },
): Promise<string[]> {
  const now = input.now ?? new Date();
  const failed: string[] = [];
  for (const run of await listAbandonedRuns(db, input.kind, now)) {
    const abandonment = await input.abandon(run, ABANDONED_REASON, now);
    const isFailed = await transitionRun(db, {
      kind: input.kind,
      id: run.id,
      from: "running",
      to: "failed",
      now,
      // checked again in the update itself: a runner that beat after the listing keeps its run
      guard: staleAt(now),
      ...abandonment,
    } as Parameters<typeof transitionRun<K>>[1]);
    if (isFailed) failed.push(run.id);
  }
  return failed;
}
