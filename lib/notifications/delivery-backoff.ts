/**
 * When a failed delivery is tried again: the first attempt at once, then five retries after
 * 10 s, 30 s, 2 min, 10 min and 1 h — a receiver down for a deploy gets its events, one down for a
 * day is marked failed on the delivery log instead of being hammered.
 */
export const DELIVERY_RETRY_DELAYS_MS = [10_000, 30_000, 120_000, 600_000, 3_600_000] as const;

/** Every attempt a delivery gets, the first included. */
export const MAX_DELIVERY_ATTEMPTS = DELIVERY_RETRY_DELAYS_MS.length + 1;

/**
 * After `attempts` failed attempts (1 = the first one failed): when to try again, or null when
 * the delivery has had all its attempts.
 */
export function nextDeliveryAttemptAt(attempts: number, failedAt: Date): Date | null {
  if (!Number.isInteger(attempts) || attempts < 1)
    throw new RangeError(`attempts must be a positive integer, got ${attempts}`);
  const delay = DELIVERY_RETRY_DELAYS_MS[attempts - 1];
  return delay === undefined ? null : new Date(failedAt.getTime() + delay);
}
