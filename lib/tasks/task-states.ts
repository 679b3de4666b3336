/**
 * The task state machine (seed 000, "Lifecycle and recovery states"), as a total transition
 * table. A state missing from the table, or a target missing from a row, is an illegal move.
 */
import type { TaskState } from "../db/generated/enums";

export const TASK_STATES = [
  "queued",
  "provisioning",
  "running",
  "collecting",
  "imported",
  "verifying",
  "review_pending",
  "approved",
  "rejected",
  "changes_requested",
  "pr_pending",
  "pr_open",
  "pr_failed",
  "blocked",
  "failed",
] as const satisfies readonly TaskState[];

const FAIL = ["blocked", "failed"] as const;

export const TASK_TRANSITIONS = {
  queued: ["provisioning", ...FAIL],
  provisioning: ["running", ...FAIL],
  running: ["collecting", ...FAIL],
  collecting: ["imported", ...FAIL],
  imported: ["verifying", ...FAIL],
  verifying: ["review_pending", ...FAIL],
  // review_pending → verifying: an operator re-verifies (e.g. after a manifest change); the old
  // evidence goes stale and any open review page with it.
  review_pending: ["approved", "rejected", "changes_requested", "verifying", ...FAIL],
  approved: ["pr_pending", ...FAIL],
  rejected: [],
  changes_requested: [],
  // pr_pending stays until the provider's state is reconciled by candidate identity (seed 000).
  pr_pending: ["pr_open", "pr_failed", ...FAIL],
  pr_open: [],
  // An operator may retry a failed publication; reconciliation decides again.
  pr_failed: ["pr_pending"],
  blocked: [],
  failed: [],
} as const satisfies Record<TaskState, readonly TaskState[]>;

/** States in which no work is scheduled and nothing will happen without an operator. */
export const TERMINAL_TASK_STATES = TASK_STATES.filter((s) => TASK_TRANSITIONS[s].length === 0 || s === "pr_failed");

/** States a worker owns and must resume (or fail visibly) after a crash. */
export const ACTIVE_TASK_STATES = ["provisioning", "running", "collecting", "imported", "verifying", "approved", "pr_pending"] as const satisfies readonly TaskState[];

export function canTransitionTask(from: TaskState, to: TaskState): boolean {
  return (TASK_TRANSITIONS[from] as readonly TaskState[]).includes(to);
}
