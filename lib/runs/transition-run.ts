/**
 * One guarded move of a background run, as every state change here is (DEVELOPERS.md): the kind's
 * transition table refuses an illegal move before the database is asked; `updateMany where {id,
 * state: from}` moves the row only if it is still where the caller saw it; the audit row and
 * whatever else the caller must write with the move commit in the same transaction, or not at all.
 * The kernel sets the timestamps every kind shares: entering `running` starts the run and its
 * heartbeat, entering a state no move leaves sets finishedAt.
 *
 * Unlike a task's transition (lib/db/compare-and-set.ts), losing the race is an expected outcome
 * for a run — a second worker's claim, a runner finishing a run the sweep already failed, an
 * operator cancelling while a worker claims — so it answers false, and the caller does nothing.
 */
import { recordAudit, type TAuditEntry } from "../audit";
import type { Db, DbTx } from "../db/client";
import { AppError } from "../errors";
import { canTransitionRun, isEndedRunState, type TRunKind, type TRunState } from "./run-states";
import { runTable, type TRunData } from "./run-table";

export type TRunTransition<K extends TRunKind> = {
  kind: K;
  id: string;
  from: TRunState<K>;
  to: TRunState<K>;
  /** the kind's own columns the move sets (its outcome, its reason) */
  data?: TRunData<K>;
  /** the audit row, written only if the move happened */
  audit?: TAuditEntry;
  /** anything else that must commit with the move (the probe results it ends, a bundle row) */
  alsoIn?: (tx: DbTx) => Promise<unknown>;
  now?: Date;
  /** a further condition the row must still meet, checked by the same guarded update (the sweep's staleness) */
  guard?: object;
};

/** Moves the run inside the caller's transaction; false when it was no longer in `from`. */
export async function transitionRunIn<K extends TRunKind>(tx: DbTx, move: TRunTransition<K>): Promise<boolean> {
  const { kind, id, from, to } = move;
  if (!canTransitionRun(kind, from, to))
    throw new AppError("STATE_CONFLICT", `Illegal ${kind} transition ${from} → ${to}.`);
  const now = move.now ?? new Date();
  const updated = await runTable(tx, kind).updateMany({
    where: { ...move.guard, id, state: from },
    data: {
      ...move.data,
      ...(to === "running" ? { startedAt: now, heartbeatAt: now, finishedAt: null } : {}),
      ...(isEndedRunState(kind, to) ? { finishedAt: now } : {}),
      // set last, whatever the caller's columns say
      state: to,
    },
  });
  if (updated.count !== 1) return false;
  if (move.audit) await recordAudit(tx, move.audit);
  await move.alsoIn?.(tx);
  return true;
}

/** Moves the run in a transaction of its own; false when it was no longer in `from`. */
export async function transitionRun<K extends TRunKind>(db: Db, move: TRunTransition<K>): Promise<boolean> {
  return db.$transaction((tx) => transitionRunIn(tx, move));
}

/** As transitionRun, but losing the race is a STATE_CONFLICT naming where the run is now. */
export async function transitionRunOrThrow<K extends TRunKind>(db: Db, move: TRunTransition<K>): Promise<void> {
  if (await transitionRun(db, move)) return;
  const current = await runTable(db, move.kind).findUnique({ where: { id: move.id }, select: { state: true } });
  throw new AppError(
    "STATE_CONFLICT",
    current
      ? `The ${move.kind} ${move.id} is ${current.state}, not ${move.from}.`
      : `There is no ${move.kind} ${move.id}.`,
    { current: current?.state },
  );
}
