/**
 * Failed sign-in throttling, kept in the database so every web instance shares it.
 *
 * Per account AND client address (its bucket, see addressBucket): a progressive delay, never a
 * lock. After ACCOUNT_FREE_FAILURES failures in WINDOW_MS, each further failure makes that
 * address's next attempt on that account wait accountDelayMs(failures) (doubling, capped at
 * ACCOUNT_MAX_DELAY_MS). An attempt during the delay is refused without being counted, so it
 * cannot lengthen the delay. The delay is keyed by the pair, not by the account alone: an account-
 * wide delay let one address, failing once each time the delay ended, keep the owner refused
 * indefinitely wherever they signed in from (issue 27, item 4). An unknown address (plain
 * `next dev`) is one bucket of its own.
 *
 * Per client address: a hard lock for LOCK_MS after ADDRESS_FAILURE_LIMIT failures — the address
 * is the guesser's own (see client-address.ts for which address counts), and it bounds how many
 * guesses one address (one IPv6 /64) gets across all accounts.
 *
 * The table is bounded: every failure prunes rows whose window and lock are over, and beyond
 * MAX_THROTTLE_ROWS the oldest unlocked rows go first, so an attacker spraying addresses and
 * accounts cannot grow it without limit (at worst it resets other buckets' counts early).
 */
import type { Db } from "../db/client";
import { addressBucket } from "./client-address";

export const WINDOW_MS = 15 * 60_000;
export const LOCK_MS = 15 * 60_000;
export const ADDRESS_FAILURE_LIMIT = 20;
export const ACCOUNT_FREE_FAILURES = 3;
export const ACCOUNT_BASE_DELAY_MS = 1_000;
export const ACCOUNT_MAX_DELAY_MS = 5 * 60_000;
export const MAX_THROTTLE_ROWS = 20_000;

export type ThrottleKind = "account" | "address";

/** "account" rows are per (email, address bucket); "address" rows per address bucket. */
export type TThrottleSubject = { email: string; clientAddress: string | null };

/** Emails (as the credentials schema accepts them) hold no space, so the prefix up to it names the account. */
export function accountKeyPrefix(email: string): string {
  return `account:${email.toLowerCase()} `;
}

export function throttleKey(kind: ThrottleKind, subject: TThrottleSubject): string {
  const bucket = subject.clientAddress ? addressBucket(subject.clientAddress) : "unknown";
  return kind === "account" ? `${accountKeyPrefix(subject.email)}${bucket}` : `address:${bucket}`;
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

/** One atomic upsert per key: concurrent failures cannot lose counts. `maxRows` is for tests. */
export async function recordFailure(db: Db, key: string, now: Date, options?: { maxRows?: number }): Promise<void> {
  const kind: ThrottleKind = key.startsWith("address:") ? "address" : "account";
  const windowStart = new Date(now.getTime() - WINDOW_MS);
  await pruneThrottle(db, now, options?.maxRows ?? MAX_THROTTLE_ROWS);
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
    kind === "account"
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

/**
 * Rows whose window and lock are both over say nothing any more: deleted. If the table is still
 * at its cap (one row is about to be added), the rows that matter least go: unlocked before
 * locked, oldest window first. The count looks at most maxRows + 1 keys, so it stays cheap.
 */
async function pruneThrottle(db: Db, now: Date, maxRows: number): Promise<void> {
  const windowStart = new Date(now.getTime() - WINDOW_MS);
  await db.$executeRaw`
    delete from "SignInThrottle"
     where "windowStart" < ${windowStart} and ("lockedUntil" is null or "lockedUntil" <= ${now})`;
  const counted = await db.$queryRaw<{ n: number }[]>`
    select count(*)::int as n from (select 1 from "SignInThrottle" limit ${maxRows}) capped`;
  if ((counted[0]?.n ?? 0) < maxRows) return;
  await db.$executeRaw`
    delete from "SignInThrottle" where key in (
      select key from "SignInThrottle"
       order by ("lockedUntil" is not null and "lockedUntil" > ${now}) desc, "windowStart" desc, key
      offset ${maxRows - 1})`;
}

export async function clearFailures(db: Db, key: string): Promise<void> {
  await db.signInThrottle.deleteMany({ where: { key } });
}
