import { describe, expect, it } from "vitest";
import { canTransitionTask, TASK_STATES, TASK_TRANSITIONS } from "./task-states";
import { canTransitionMachine, MACHINE_STATES, MACHINE_TRANSITIONS } from "../machines/machine-states";

// The specification (seed 000 and ARCHITECTURE.md), written out pair by pair so a change to the
// table must be a deliberate change here too.
const TASK_ALLOWED = new Set([
  "queued>provisioning",
  "provisioning>running",
  "running>collecting",
  "collecting>imported",
  "imported>verifying",
  "verifying>review_pending",
  "review_pending>approved",
  "review_pending>rejected",
  "review_pending>changes_requested",
  "review_pending>imported",
  "approved>pr_pending",
  "pr_pending>pr_open",
  "pr_pending>pr_failed",
  "pr_failed>pr_pending",
  "changes_requested>queued",
  "blocked>queued",
  "blocked>imported",
  "failed>queued",
  "failed>imported",
  ...[
    "queued",
    "provisioning",
    "running",
    "collecting",
    "imported",
    "verifying",
    "review_pending",
    "changes_requested",
    "approved",
    "pr_pending",
  ].flatMap((s) => [`${s}>blocked`, `${s}>failed`]),
  // Attempts (issue 26): the attempts a teacher did not choose end from anywhere before a decision
  // for them (or after a rejection or failure), never from an approval or a publication.
  ...[
    "queued",
    "provisioning",
    "running",
    "collecting",
    "imported",
    "verifying",
    "review_pending",
    "changes_requested",
    "rejected",
    "blocked",
    "failed",
  ].map((s) => `${s}>not_chosen`),
]);

const MACHINE_ALLOWED = new Set([
  "requested>created",
  "requested>failed",
  "requested>cleanup_quarantined",
  "created>started",
  "started>ready",
  "ready>exported",
  ...["created", "started", "ready", "exported"].flatMap((s) => [`${s}>destroyed`, `${s}>cleanup_quarantined`]),
  "cleanup_quarantined>destroyed",
  "destroyed>cleanup_quarantined",
  "failed>cleanup_quarantined",
]);

describe("task transition table", () => {
  it("covers every state", () => {
    expect(Object.keys(TASK_TRANSITIONS).sort()).toEqual([...TASK_STATES].sort());
  });
  const pairs = TASK_STATES.flatMap((from) => TASK_STATES.map((to) => [from, to] as const));
  it.each(pairs)("%s → %s", (from, to) => {
    expect(canTransitionTask(from, to)).toBe(TASK_ALLOWED.has(`${from}>${to}`));
  });
  it("never lets a failure state lead to success: only a new attempt (queued, or imported to verify again), or the end of an attempt not chosen", () => {
    for (const to of TASK_STATES) {
      const isNewAttemptOrEnd = to === "queued" || to === "imported" || to === "not_chosen";
      expect(canTransitionTask("failed", to)).toBe(isNewAttemptOrEnd);
      expect(canTransitionTask("blocked", to)).toBe(isNewAttemptOrEnd);
    }
  });
});

describe("machine transition table", () => {
  it("covers every state", () => {
    expect(Object.keys(MACHINE_TRANSITIONS).sort()).toEqual([...MACHINE_STATES].sort());
  });
  const pairs = MACHINE_STATES.flatMap((from) => MACHINE_STATES.map((to) => [from, to] as const));
  it.each(pairs)("%s → %s", (from, to) => {
    expect(canTransitionMachine(from, to)).toBe(MACHINE_ALLOWED.has(`${from}>${to}`));
  });
});
