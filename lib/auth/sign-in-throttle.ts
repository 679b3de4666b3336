/**
 * Failed sign-in throttling, kept in the database so every web instance shares it.
 *
 * Per account (email): a progressive delay, never a lock. After ACCOUNT_FREE_FAILURES failures in
 * WINDOW_MS, each further failure makes the next attempt wait accountDelayMs(failures) (doubling,
 * capped at ACCOUNT_MAX_DELAY_MS). An attempt during the delay is refused without being counted,
 * so it cannot lengthen the delay, and the right password after the delay signs in: someone who
 * knows an email address can slow its guessing down but cannot lock its owner out (issue 12, item 5).
 *
 * Per client address: a hard lock for LOCK_MS after ADDRESS_FAILURE_LIMIT failures — the address
 * is the guesser's own (see client-address.ts for which address counts).
 */
import type { Db } from "../db/client";

export const WINDOW_MS = 15 * 60_000;
export const LOCK_MS = 15 * 60_000;
export const ADDRESS_FAILURE_LIMIT = 20;
export const ACCOUNT_FREE_FAILURES = 3;
export const ACCOUNT_BASE_DELAY_MS = 1_000;
export const ACCOUNT_MAX_DELAY_MS = 5 * 60_000;

export type ThrottleKind = "email" | "address";

export function throttleKey(kind: ThrottleKind, value: string): string {
  return `${kind}:${value.toLowerCase()}`;
}

/** How long an account waits after its `failures`-th failure in the window (0 for the first few). */
export function accountDelayMs(failures: number): number {
  if (failures < ACCOUNT_FREE_FAILURES) return 0;
  const doublings = Math.min(failures - ACCOUNT_FREE_FAILURES, 30);
  return Math.min(ACCOUNT_BASE_DELAY_MS * 2 ** doublings, ACCOUNT_MAX_DELAY_MS);
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
  const row = await db.$queryRaw<{ failures: number }[]>`
    insert into "SignInThrottle" (key, failures, "windowStart", "lockedUntil")
    values (${key}, 1, ${now}, null)
    on conflict (key) do update set
      failures = case when "SignInThrottle"."windowStart" < ${windowStart} then 1 else "SignInThrottle".failures + 1 end,
      "windowStart" = case when "SignInThrottle"."windowStart" < ${windowStart} then ${now} else "SignInThrottle"."windowStart" end
    returning failures`;
  const failures = row[0]?.failures ?? 1;
  // The failure count is exact (the upsert above); the wait it implies is set from it.
  const lockedUntil =
    kind === "email"
      ? accountDelayMs(failures) > 0
        ? new Date(now.getTime() + accountDelayMs(failures))
        : null
      : failures >= ADDRESS_FAILURE_LIMIT
        ? new Date(now.getTime() + LOCK_MS)
        : undefined;
  if (lockedUntil === undefined) return;
  // Never shorten a wait another concurrent failure already set.
  await db.$executeRaw`
    update "SignInThrottle" set "lockedUntil" = ${lockedUntil}
     where key = ${key} and (${lockedUntil}::timestamptz is null or "lockedUntil" is null or "lockedUntil" < ${lockedUntil})`;
}

export async function clearFailures(db: Db, kind: ThrottleKind, value: string): Promise<void> {
  await db.signInThrottle.deleteMany({ where: { key: throttleKey(kind, value) } });
}
