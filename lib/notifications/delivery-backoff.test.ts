import { describe, expect, it } from "vitest";
import { DELIVERY_RETRY_DELAYS_MS, MAX_DELIVERY_ATTEMPTS, nextDeliveryAttemptAt } from "./delivery-backoff";

describe("delivery backoff", () => {
  const failedAt = new Date("2026-01-01T00:00:00Z");

  it.each([
    [1, 10_000],
    [2, 30_000],
    [3, 120_000],
    [4, 600_000],
    [5, 3_600_000],
  ])("after %i failed attempt(s) the next one waits %i ms", (attempts, delay) => {
    expect(nextDeliveryAttemptAt(attempts, failedAt)!.getTime() - failedAt.getTime()).toBe(delay);
  });

  it("gives up after the last attempt: six in all, the first at once", () => {
    expect(MAX_DELIVERY_ATTEMPTS).toBe(6);
    expect(nextDeliveryAttemptAt(MAX_DELIVERY_ATTEMPTS, failedAt)).toBeNull();
    expect(nextDeliveryAttemptAt(100, failedAt)).toBeNull();
  });

  it("the delays only grow", () => {
    for (let i = 1; i < DELIVERY_RETRY_DELAYS_MS.length; i++)
      expect(DELIVERY_RETRY_DELAYS_MS[i]).toBeGreaterThan(DELIVERY_RETRY_DELAYS_MS[i - 1]!);
  });

  it("refuses a count that is not a positive integer", () => {
    for (const n of [0, -1, 1.5, Number.NaN]) expect(() => nextDeliveryAttemptAt(n, failedAt)).toThrow(RangeError);
  });
});
