/**
 * Pure reconciliation rules: how provider state maps to a decision, how long to back off, and
 * which progress markers PullRequest.reconcileState may hold. No I/O here.
 */
import type { TProviderPull } from "./publication-provider";

/**
 * PullRequest.reconcileState. The order is the order of side effects, so a resumed attempt
 * knows what may already have happened:
 * - not_pushed: nothing of ours is known to be on the provider
 * - pushed: the branch is on the remote at the approved head SHA (persisted right after the push)
 * - create_sent: a create request left; a pull request may exist even if we never heard back
 * - ambiguous: the last provider answer was a timeout/5xx; the next attempt reconciles first
 * - adopted / created: terminal success (found by reconciliation / created by us)
 * - conflict: the provider holds something else for this branch; nothing was overwritten
 * - failed: an operator or a definite refusal ended the publication
 */
export const RECONCILE_STATES = [
  "not_pushed",
  "pushed",
  "create_sent",
  "ambiguous",
  "adopted",
  "created",
  "conflict",
  "failed",
] as const;
export type TReconcileState = (typeof RECONCILE_STATES)[number];

export type TPullMatch =
  | { kind: "none" }
  | { kind: "match"; pull: TProviderPull }
  | { kind: "closed_match"; pull: TProviderPull }
  | { kind: "mismatch"; pull: TProviderPull };

/**
 * What the provider's pull requests for our head branch and base mean for this candidate. A
 * live (open or merged) pull request at our head SHA is ours: adopt it. One at another SHA means
 * the branch was changed by someone else: never adopt, never create a second one. A closed,
 * unmerged one at our SHA was closed by a human; opening another would be a duplicate.
 */
export function matchPullToCandidate(pulls: readonly TProviderPull[], headSha: string): TPullMatch {
  const ours = pulls.filter((p) => p.headSha === headSha);
  const live = ours.find((p) => p.state === "open" || p.state === "merged");
  if (live) return { kind: "match", pull: live };
  const foreign = pulls.find((p) => p.headSha !== headSha && p.state !== "closed");
  if (foreign) return { kind: "mismatch", pull: foreign };
  const closed = ours[0];
  if (closed) return { kind: "closed_match", pull: closed };
  const closedForeign = pulls[0];
  if (closedForeign) return { kind: "mismatch", pull: closedForeign };
  return { kind: "none" };
}

export const FIRST_RETRY_DELAY_MS = 15_000;
export const MAX_RETRY_DELAY_MS = 15 * 60_000;

/** Exponential, capped: attempt 1 → 15 s, 2 → 30 s … never more than 15 minutes. */
export function retryDelayMs(attempts: number): number {
  const exponent = Math.max(0, Math.min(attempts - 1, 20));
  return Math.min(FIRST_RETRY_DELAY_MS * 2 ** exponent, MAX_RETRY_DELAY_MS);
}

/**
 * How long one claimed attempt may hold the publication before another worker may take over.
 * Longer than the slowest attempt the setting caps allow (4 API calls at 2 × 30 s headers+body,
 * one push at 150 s = 390 s), so a live attempt is not overtaken; a crashed one is resumed after
 * this at the latest (or at once after an operator retry). Overtaking is safe anyway (fencing),
 * just wasteful.
 */
export const ATTEMPT_LEASE_MS = 10 * 60_000;

export function candidateBranchOf(taskId: string): string {
  return `school/${taskId}`;
}
