import { describe, expect, it } from "vitest";
import {
  canTransitionRun,
  isEndedRunState,
  RUN_HEARTBEAT_STALE_MS,
  RUN_KINDS,
  type TRunKind,
  type TRunState,
} from "./run-states";

// The specification of each kind, written out pair by pair so a change to a table must be a
// deliberate change here too.
const ALLOWED: { [K in TRunKind]: ReadonlySet<string> } = {
  "probe-run": new Set(["queued>running", "running>passed", "running>failed"]),
  "setup-run": new Set(["running>succeeded", "running>failed"]),
  "bundle-build": new Set([
    "queued>running",
    "queued>failed",
    "queued>cancelled",
    "running>queued",
    "running>succeeded",
    "running>failed",
    "running>cancelled",
  ]),
};

const KINDS = Object.keys(RUN_KINDS) as TRunKind[];

describe.each(KINDS)("the %s transition table", (kind) => {
  const states = RUN_KINDS[kind].states as readonly TRunState<typeof kind>[];
  it("covers every state of its enum", () => {
    expect(Object.keys(RUN_KINDS[kind].transitions).sort()).toEqual([...states].sort());
  });
  const pairs = states.flatMap((from) => states.map((to) => [from, to] as const));
  it.each(pairs)("%s → %s", (from, to) => {
    expect(canTransitionRun(kind, from, to)).toBe(ALLOWED[kind].has(`${from}>${to}`));
  });
  it("never leaves an ended run, and a failed run never succeeds", () => {
    for (const to of states) expect(canTransitionRun(kind, "failed", to)).toBe(false);
    for (const from of states)
      if (isEndedRunState(kind, from)) for (const to of states) expect(canTransitionRun(kind, from, to)).toBe(false);
  });
  it("lets the sweep fail a running run (running → failed), and beats often enough not to be swept while alive", () => {
    expect(canTransitionRun(kind, "running", "failed")).toBe(true);
    expect(RUN_KINDS[kind].heartbeatMs * 6).toBeLessThanOrEqual(RUN_HEARTBEAT_STALE_MS);
  });
});
