import { describe, expect, it } from "vitest";
import type { TProviderPull } from "./publication-provider";
import { MAX_RETRY_DELAY_MS, matchPullToCandidate, retryDelayMs } from "./reconcile";

const HEAD = "a".repeat(40);
const OTHER = "b".repeat(40);
const pull = (number: number, headSha: string, state: TProviderPull["state"]): TProviderPull => ({
  number,
  url: `http://x/${number}`,
  headRef: "school/t",
  headSha,
  baseRef: "main",
  state,
});

describe("matchPullToCandidate", () => {
  it.each([
    { name: "nothing", pulls: [], expected: "none" },
    { name: "an open PR at our SHA", pulls: [pull(1, HEAD, "open")], expected: "match" },
    { name: "a merged PR at our SHA", pulls: [pull(1, HEAD, "merged")], expected: "match" },
    { name: "an open PR at another SHA", pulls: [pull(1, OTHER, "open")], expected: "mismatch" },
    { name: "a closed PR at our SHA", pulls: [pull(1, HEAD, "closed")], expected: "closed_match" },
    { name: "a closed PR at another SHA", pulls: [pull(1, OTHER, "closed")], expected: "mismatch" },
    {
      name: "ours open and a foreign closed one",
      pulls: [pull(2, OTHER, "closed"), pull(1, HEAD, "open")],
      expected: "match",
    },
    {
      name: "ours closed and a foreign open one",
      pulls: [pull(1, HEAD, "closed"), pull(2, OTHER, "open")],
      expected: "mismatch",
    },
  ])("$name → $expected", ({ pulls, expected }) => {
    expect(matchPullToCandidate(pulls, HEAD).kind).toBe(expected);
  });

  it("adopts the live one when several exist", () => {
    const result = matchPullToCandidate([pull(1, HEAD, "closed"), pull(2, HEAD, "open")], HEAD);
    expect(result).toMatchObject({ kind: "match", pull: { number: 2 } });
  });
});

describe("retryDelayMs", () => {
  it("grows exponentially and is bounded", () => {
    expect(retryDelayMs(1)).toBe(15_000);
    expect(retryDelayMs(2)).toBe(30_000);
    expect(retryDelayMs(3)).toBe(60_000);
    expect(retryDelayMs(10)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(10_000)).toBe(MAX_RETRY_DELAY_MS);
    expect(retryDelayMs(0)).toBe(15_000);
  });
});
