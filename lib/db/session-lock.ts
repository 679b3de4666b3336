/**
 * A session-level PostgreSQL advisory lock on a dedicated pooled connection, for work that spans
 * several processes (N workers, N web processes, on N hosts): one holder at a time per key. If the
 * holder dies, its connection closes and the lock is released — nothing to clean up.
 *
 * `waitMs` 0 tries once (busy at once when held elsewhere); otherwise the lock is waited for in
 * PostgreSQL (no polling) up to `waitMs`, then busy.
 */
import type pg from "pg";

export type TSessionLockOutcome<T> = { kind: "ran"; value: T } | { kind: "busy" };

const LOCK_NOT_AVAILABLE = "55P03";

export async function withSessionLock<T>(
  pool: pg.Pool,
  key: string,
  options: { waitMs: number },
  body: () => Promise<T>,
): Promise<TSessionLockOutcome<T>> {
  const client = await pool.connect();
  try {
    if (!(await acquire(client, key, options.waitMs))) return { kind: "busy" };
    try {
      return { kind: "ran", value: await body() };
    } finally {
      await client.query("select pg_advisory_unlock(hashtext($1))", [key]).catch(() => undefined);
    }
  } finally {
    client.release();
  }
}

async function acquire(client: pg.PoolClient, key: string, waitMs: number): Promise<boolean> {
  if (waitMs <= 0) {
    const locked = await client.query<{ ok: boolean }>("select pg_try_advisory_lock(hashtext($1)) as ok", [key]);
    return locked.rows[0]?.ok === true;
  }
  // lock_timeout bounds the wait; it is reset before the connection goes back to the pool.
  await client.query("select set_config('lock_timeout', $1, false)", [`${Math.ceil(waitMs)}ms`]);
  try {
    await client.query("select pg_advisory_lock(hashtext($1))", [key]);
    return true;
  } catch (error) {
    if ((error as { code?: unknown }).code === LOCK_NOT_AVAILABLE) return false;
    throw error;
  } finally {
    await client.query("reset lock_timeout");
  }
}
