/**
 * Failed sign-in throttling, kept in the database so every web instance shares it.
 * A key is locked for LOCK_MS once it reaches its failure limit inside WINDOW_MS.
 */
import type { Db } from "../db/client";

export const WINDOW_MS = 15 * 60_000;
export const LOCK_MS = 15 * 60_000;
export const FAILURE_LIMITS = { email: 5, address: 20 } as const;

export type ThrottleKind = keyof typeof FAILURE_LIMITS;

export function throttleKey(kind: ThrottleKind, value: string): string {
  return `${kind}:${value.toLowerCase()}`;
}

export async function findLockedUntil(db: Db, keys: string[], now: Date): Promise<Date | undefined> {
  const rows = await db.signInThrottle.findMany({ where: { key: { in: keys }, lockedUntil: { gt: now } } });
  const latest = rows.map((r) => r.lockedUntil!).sort((a, b) => b.getTime() - a.getTime())[0];
  return latest;
}

/** One atomic upsert per key: concurrent failures cannot lose counts. */
export async function recordFailure(db: Db, kind: ThrottleKind, value: string, now: Date): Promise<void> {
  const key = throttleKey(kind, value);
  const windowStart = new Date(now.getTime() - WINDOW_MS);
  const lockUntil = new Date(now.getTime() + LOCK_MS);
  await db.$executeRaw`
    insert into "SignInThrottle" (key, failures, "windowStart", "lockedUntil")
    values (${key}, 1, ${now}, null)
    on conflict (key) do update set
      failures = case when "SignInThrottle"."windowStart" < ${windowStart} then 1 else "SignInThrottle".failures + 1 end,
      "windowStart" = case when "SignInThrottle"."windowStart" < ${windowStart} then ${now} else "SignInThrottle"."windowStart" end,
      "lockedUntil" = case
        when "SignInThrottle"."windowStart" >= ${windowStart} and "SignInThrottle".failures + 1 >= ${FAILURE_LIMITS[kind]} then ${lockUntil}
        else "SignInThrottle"."lockedUntil" end`;
}

export async function clearFailures(db: Db, kind: ThrottleKind, value: string): Promise<void> {
  await db.signInThrottle.deleteMany({ where: { key: throttleKey(kind, value) } });
}
