/**
 * One worker at a time per task, whatever the queue does: a session-level advisory lock on a
 * dedicated connection (lib/db/session-lock.ts), tried once — a task another worker is driving is
 * left to it. If the worker dies, its connection closes and the lock is released.
 */
import type pg from "pg";
import { withSessionLock, type TSessionLockOutcome } from "../db/session-lock";

export function withTaskLock<T>(pool: pg.Pool, key: string, body: () => Promise<T>): Promise<TSessionLockOutcome<T>> {
  return withSessionLock(pool, key, { waitMs: 0 }, body);
}
