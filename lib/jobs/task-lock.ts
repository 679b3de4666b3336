/**
 * One worker at a time per task, whatever the queue does: a session-level advisory lock on a
 * dedicated connection. If the worker dies, its connection closes and the lock is released.
 */
import type pg from "pg";

export async function withTaskLock<T>(
  pool: pg.Pool,
  key: string,
  body: () => Promise<T>,
): Promise<{ kind: "ran"; value: T } | { kind: "busy" }> {
  const client = await pool.connect();
  try {
    const locked = await client.query<{ ok: boolean }>("select pg_try_advisory_lock(hashtext($1)) as ok", [key]);
    if (!locked.rows[0]?.ok) return { kind: "busy" };
    try {
      return { kind: "ran", value: await body() };
    } finally {
      await client.query("select pg_advisory_unlock(hashtext($1))", [key]).catch(() => undefined);
    }
  } finally {
    client.release();
  }
}
