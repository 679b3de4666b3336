/**
 * Time for the local substrate. Everything that depends on time (readiness, TTL, billing) reads
 * one clock so the admin API can fast-forward all of it together.
 */

/** Epoch milliseconds. Injected in tests; the system clock otherwise. */
export type TClock = { now(): number };

export const SYSTEM_CLOCK: TClock = { now: () => Date.now() };

/** A clock that runs with its base clock plus an offset the admin API can only move forward. */
export class OffsetClock implements TClock {
  #offsetMs = 0;

  constructor(private readonly base: TClock) {}

  now(): number {
    return this.base.now() + this.#offsetMs;
  }

  get offsetMs(): number {
    return this.#offsetMs;
  }

  /** Moves time forward; never backward, so TTLs and billed seconds stay monotonic. */
  advance(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) throw new RangeError("the clock only moves forward");
    this.#offsetMs += ms;
  }
}

export function isoOf(ms: number): string {
  return new Date(ms).toISOString();
}
