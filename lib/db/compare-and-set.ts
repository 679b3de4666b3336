/**
 * The one compare-and-set transition kernel, for every table with a state column and a
 * transition log (tasks, guest machines). It sits below the tables that use it, so they share
 * one mechanism rather than two copies that could drift:
 * - an illegal move is refused before the database is asked;
 * - `updateMany where {id, state: from}`: the row moves only if it is still where the caller saw
 *   it, and zero rows updated means someone else moved it (or it is gone): STATE_CONFLICT;
 * - the log row is written in the caller's transaction, with the operation id and attempt the row
 *   holds after the update, so a transition and its log row commit together or not at all;
 * - the reason is bounded and redacted once, here, before it reaches the row or the log.
 */
import { AppError } from "../errors";
import { sanitizeExcerpt } from "../redact";

export const MAX_REASON_BYTES = 2048;

/**
 * The three calls the kernel makes on a table: structurally what Prisma's delegates offer
 * (`tx.task`, `tx.guestMachine`), so a caller passes its delegate as it is.
 */
export type TStateTable<TState extends string, TData, TRow> = {
  updateMany(args: { where: { id: string; state: TState }; data: TData }): PromiseLike<{ count: number }>;
  findUnique(args: { where: { id: string }; select: { state: true } }): PromiseLike<{ state: TState } | null>;
  findUniqueOrThrow(args: { where: { id: string } }): PromiseLike<TRow>;
};

export type TTransitionLogEntry<TState extends string> = {
  fromState: TState;
  toState: TState;
  operationId: string;
  attempt: number;
  reason: string | undefined;
};

export type TCompareAndSetOptions<TState extends string, TData, TRow> = {
  /** "task", "machine": names the row in refusals. */
  entity: string;
  table: TStateTable<TState, TData, TRow>;
  id: string;
  from: TState;
  to: TState;
  /** The table's transition relation (total and typed beside its states). */
  canTransition: (from: TState, to: TState) => boolean;
  /** bounded and redacted before it is stored */
  reason?: string;
  /** The columns the move sets besides the state, given the bounded reason. */
  data?: (reason: string | undefined) => TData;
  /** Writes the log row (in the same transaction as `table`). */
  writeLog: (entry: TTransitionLogEntry<TState>) => PromiseLike<unknown>;
};

/** Moves one row from `from` to `to` and logs it; returns the row as it is after the move. */
export async function compareAndSetState<
  TState extends string,
  TData,
  TRow extends { operationId: string; attempt: number },
>(options: TCompareAndSetOptions<TState, TData, TRow>): Promise<TRow> {
  const { entity, table, id, from, to } = options;
  if (!options.canTransition(from, to))
    throw new AppError("STATE_CONFLICT", `Illegal ${entity} transition ${from} → ${to}.`);
  const reason = options.reason === undefined ? undefined : sanitizeExcerpt(options.reason, MAX_REASON_BYTES);
  // The state is set here, last, whatever else the caller's columns say.
  const data = { ...options.data?.(reason), state: to } as TData;
  const updated = await table.updateMany({ where: { id, state: from }, data });
  if (updated.count !== 1) {
    const current = await table.findUnique({ where: { id }, select: { state: true } });
    const name = `${entity.charAt(0).toUpperCase()}${entity.slice(1)} ${id}`;
    throw new AppError(
      "STATE_CONFLICT",
      current ? `${name} is ${current.state}, not ${from}.` : `${name} does not exist.`,
      {
        current: current?.state,
      },
    );
  }
  const row = await table.findUniqueOrThrow({ where: { id } });
  await options.writeLog({ fromState: from, toState: to, operationId: row.operationId, attempt: row.attempt, reason });
  return row;
}
