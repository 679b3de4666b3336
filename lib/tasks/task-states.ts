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
  "not_chosen",
] as const satisfies readonly TaskState[];

/**
 * Attempts (issue 26): when the teacher approves one attempt of a group, every other attempt that
 * has not been decided yet ends as not_chosen — from wherever it is (its guests are destroyed and its
 * capability revoked as for a cancel), never from an approval or a publication.
 */
const FAIL = ["blocked", "failed"] as const;
const FAIL_OR_NOT_CHOSEN = [...FAIL, "not_chosen"] as const;

export const TASK_TRANSITIONS = {
  queued: ["provisioning", ...FAIL_OR_NOT_CHOSEN],
  provisioning: ["running", ...FAIL_OR_NOT_CHOSEN],
  running: ["collecting", ...FAIL_OR_NOT_CHOSEN],
  collecting: ["imported", ...FAIL_OR_NOT_CHOSEN],
  imported: ["verifying", ...FAIL_OR_NOT_CHOSEN],
  verifying: ["review_pending", ...FAIL_OR_NOT_CHOSEN],
  // review_pending → imported: an operator re-verifies (e.g. after a manifest change); the old
  // evidence goes stale and any open review page with it, and the checks start again from
  // `imported` once a machine is free for the verifier.
  review_pending: ["approved", "rejected", "changes_requested", "imported", ...FAIL_OR_NOT_CHOSEN],
  approved: ["pr_pending", ...FAIL],
  rejected: ["not_chosen"],
  // Revision rounds (issue 14): "Request changes" closes the round; the worker then queues the
  // next round (round + 1, a new operation) in its own compare-and-set, so a crash between the
  // decision and the new round resumes here and never starts a round twice.
  changes_requested: ["queued", ...FAIL_OR_NOT_CHOSEN],
  // pr_pending stays until the provider's state is reconciled by candidate identity (seed 000).
  pr_pending: ["pr_open", "pr_failed", ...FAIL],
  pr_open: [],
  // An operator may retry a failed publication; reconciliation decides again.
  pr_failed: ["pr_pending"],
  // Retry (issue 13): an operator (or the automatic retry of a transient provider error) starts
  // a new attempt — a new operation id, a fresh guest and capability — from the start (queued),
  // or from `imported` when the attempt had already imported its candidate (the student run is
  // not repeated; verification runs again on a fresh verifier guest). Never straight to success.
  blocked: ["queued", "imported", "not_chosen"],
  failed: ["queued", "imported", "not_chosen"],
  not_chosen: [],
} as const satisfies Record<TaskState, readonly TaskState[]>;

/** States in which no work is scheduled and nothing will happen without an operator. */
export const TERMINAL_TASK_STATES = TASK_STATES.filter(
  (s) => TASK_TRANSITIONS[s].length === 0 || s === "pr_failed" || s === "blocked" || s === "failed",
);

/** States an operator may retry (a new attempt of the same task). */
export const RETRYABLE_TASK_STATES = ["blocked", "failed"] as const satisfies readonly TaskState[];

/** States a worker owns and must resume (or fail visibly) after a crash. */
export const ACTIVE_TASK_STATES = [
  "provisioning",
  "running",
  "collecting",
  "imported",
  "verifying",
  "changes_requested",
  "approved",
  "pr_pending",
] as const satisfies readonly TaskState[];

export function canTransitionTask(from: TaskState, to: TaskState): boolean {
  return (TASK_TRANSITIONS[from] as readonly TaskState[]).includes(to);
}
