/**
 * The queue of background runs a worker picks up (probe runs, bundle build requests): a queued
 * run is announced to the workers in the transaction that queued it (lib/db/work-ready.ts: the
 * notification is delivered only if that transaction commits), claimed by exactly one runner, and
 * listed oldest first for the worker's sweep, which recovers what a lost notification missed.
 */
import type { Db, DbTx } from "../db/client";
import { notifyWorkReady } from "../db/work-ready";
import type { TQueuedRunKind, TRunKind } from "./run-states";
import { runTable, type TRunData } from "./run-table";
import { transitionRun } from "./transition-run";
import type { TAuditEntry } from "../audit";

/** Tells the workers, from inside the transaction that queued it, that this run is ready. */
export async function announceQueuedRun(tx: Db | DbTx, run: { kind: TQueuedRunKind; id: string }): Promise<void> {
  await notifyWorkReady(tx, { kind: run.kind, id: run.id });
}

/**
 * queued → running for one runner: of two claimers at once exactly one gets true (the guarded
 * update decides); the loser, and a claim of a run that is not queued, get false and leave it.
 */
export async function claimRun<K extends TRunKind>(
  db: Db,
  claim: { kind: K; id: string; data?: TRunData<K>; audit?: TAuditEntry },
): Promise<boolean> {
  return transitionRun(db, { ...claim, from: "queued", to: "running" } as Parameters<typeof transitionRun<K>>[1]);
}

/** The queue, oldest first: what the worker's sweep sends to the kind's job. */
export async function listQueuedRuns(db: Db, kind: TQueuedRunKind, take = 10): Promise<string[]> {
  const rows = await runTable(db, kind).findMany({
    where: { state: "queued" },
    orderBy: { createdAt: "asc" },
    take,
    select: { id: true },
  });
  return rows.map((r) => r.id);
}
