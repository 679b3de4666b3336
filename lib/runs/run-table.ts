/**
 * Which table holds each kind of run, and the columns every run table shares (id, state,
 * startedAt, heartbeatAt, finishedAt; createdAt for the queued kinds). The kernel reaches the three
 * Prisma delegates through the one narrow shape below; the columns a caller may set besides those
 * stay typed per kind (TRunData), so a kind cannot write another kind's columns.
 */
import type { Db, DbTx } from "../db/client";
import type { BundleBuildRequest, DependencySetupRun, Prisma, ProbeRun } from "../db/generated/client";
import type { TRunKind } from "./run-states";

/** The columns a transition of each kind may set besides its state and timestamps. */
export type TRunData<K extends TRunKind> = {
  "probe-run": Omit<Prisma.ProbeRunUncheckedUpdateManyInput, "state">;
  "setup-run": Omit<Prisma.DependencySetupRunUncheckedUpdateManyInput, "state">;
  "bundle-build": Omit<Prisma.BundleBuildRequestUncheckedUpdateManyInput, "state">;
}[K];

/** A whole row of each kind. */
export type TRunRecord<K extends TRunKind> = {
  "probe-run": ProbeRun;
  "setup-run": DependencySetupRun;
  "bundle-build": BundleBuildRequest;
}[K];

export type TRunRow = { id: string; state: string; startedAt: Date | null; heartbeatAt: Date | null };

/** What the kernel asks of a run table: a subset of what each Prisma delegate offers. */
export type TRunTable = {
  updateMany(args: { where: object; data: object }): PromiseLike<{ count: number }>;
  findMany(args: { where: object; select?: object; orderBy?: object; take?: number }): PromiseLike<TRunRow[]>;
  findUnique(args: { where: { id: string }; select: { state: true } }): PromiseLike<{ state: string } | null>;
};

export function runTable(db: Db | DbTx, kind: TRunKind): TRunTable {
  // The three delegates' generic signatures are wider than TRunTable; the shared columns they are
  // asked for exist on all three (checked by the kernel's integration tests on each kind).
  const tables: Record<TRunKind, unknown> = {
    "probe-run": db.probeRun,
    "setup-run": db.dependencySetupRun,
    "bundle-build": db.bundleBuildRequest,
  };
  return tables[kind] as TRunTable;
}
