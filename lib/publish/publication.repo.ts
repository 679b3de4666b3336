/**
 * Prisma adapter for publication: the context an attempt needs, the approved → pr_pending start,
 * the attempt lease, fenced progress writes and the three endings (open, failed, still pending).
 *
 * Fencing: claiming an attempt increments PullRequest.attempts and sets nextAttemptAt to the
 * lease's end. Every later write of that attempt is conditioned on (state = pending, attempts =
 * the claimed number), so an attempt that was overtaken — its lease ran out, an operator retried
 * or marked it failed — cannot overwrite what its successor found. Zero rows updated = superseded.
 */
import type { Db, DbTx } from "../db/client";
import type { Prisma } from "../db/generated/client";
import { AppError, isAppError } from "../errors";
import { transitionTaskIn } from "../tasks/transition-task";
import { recordAudit } from "../audit";
import { sanitizeExcerpt } from "../redact";
import { ATTEMPT_LEASE_MS, type TReconcileState } from "./reconcile";

const MAX_LAST_ERROR_BYTES = 1024;

export async function loadPublicationContext(db: Db, taskId: string) {
  const task = await db.task.findUnique({
    where: { id: taskId },
    include: {
      repository: true,
      pullRequest: true,
      candidates: { orderBy: { round: "asc" }, include: { decisions: { select: { verdict: true } } } },
    },
  });
  if (!task) return undefined;
  // The task's current round is the one a decision can approve (issue 14); earlier rounds were
  // sent back and are only listed in the pull request body.
  const candidate = task.candidates.find((c) => c.round === task.round);
  const rounds = task.candidates.map((c) => ({
    round: c.round,
    candidateId: c.id,
    headSha: c.headSha,
    verdict: c.decisions[0]?.verdict ?? null,
  }));
  const decisions = candidate
    ? await db.reviewDecision.findMany({
        where: { candidateId: candidate.id },
        include: { evidence: true, teacher: { select: { id: true, name: true, isDisabled: true } } },
      })
    : [];
  return { task, candidate, decisions, rounds };
}

export type TPublicationContext = NonNullable<Awaited<ReturnType<typeof loadPublicationContext>>>;

export type TPullRequestRow = NonNullable<TPublicationContext["task"]["pullRequest"]>;

/** approved → pr_pending and the PullRequest row, in one transaction. */
export async function startPublicationIn(
  tx: DbTx,
  input: {
    taskId: string;
    candidateId: string;
    decisionId: string;
    headSha: string;
    branch: string;
    baseRef: string;
    repository: string;
    provider: string;
  },
) {
  await transitionTaskIn(tx, {
    taskId: input.taskId,
    from: "approved",
    to: "pr_pending",
    reason: `approved; publishing ${input.branch} at ${input.headSha}`,
  });
  return tx.pullRequest.create({
    data: {
      taskId: input.taskId,
      candidateId: input.candidateId,
      decisionId: input.decisionId,
      headSha: input.headSha,
      branch: input.branch,
      baseRef: input.baseRef,
      provider: input.provider,
      repository: input.repository,
      state: "pending",
      reconcileState: "not_pushed",
    },
  });
}

export type TAttemptFence = { pullRequestId: string; taskId: string; attempt: number };

/**
 * Claims the next attempt if no other attempt holds the lease and any backoff has passed.
 * Returns the fence, or undefined when someone else holds it (or it is not due yet).
 */
export async function claimAttempt(db: Db, pull: TPullRequestRow, now: Date): Promise<TAttemptFence | undefined> {
  const claimed = await db.pullRequest.updateMany({
    where: {
      id: pull.id,
      state: "pending",
      attempts: pull.attempts,
      OR: [{ nextAttemptAt: null }, { nextAttemptAt: { lte: now } }],
    },
    data: { attempts: { increment: 1 }, nextAttemptAt: new Date(now.getTime() + ATTEMPT_LEASE_MS), leaseTakenAt: now },
  });
  return claimed.count === 1 ? { pullRequestId: pull.id, taskId: pull.taskId, attempt: pull.attempts + 1 } : undefined;
}

export function supersededError(fence: TAttemptFence): AppError {
  return new AppError(
    "STATE_CONFLICT",
    `Publication attempt ${fence.attempt} of task ${fence.taskId} was superseded.`,
    {
      superseded: true,
    },
  );
}

export function isSuperseded(error: unknown): boolean {
  return isAppError(error) && error.code === "STATE_CONFLICT" && error.details?.superseded === true;
}

async function updateFenced(
  db: Db | DbTx,
  fence: TAttemptFence,
  data: Prisma.PullRequestUpdateManyMutationInput,
): Promise<void> {
  const updated = await db.pullRequest.updateMany({
    where: { id: fence.pullRequestId, state: "pending", attempts: fence.attempt },
    data,
  });
  if (updated.count !== 1) throw supersededError(fence);
}

export function boundLastError(text: string): string {
  return sanitizeExcerpt(text, MAX_LAST_ERROR_BYTES);
}

/** Persists a step of this attempt (e.g. `pushed` right after the push) before the next side effect. */
export async function saveProgress(db: Db, fence: TAttemptFence, reconcileState: TReconcileState): Promise<void> {
  await updateFenced(db, fence, { reconcileState });
}

export async function finishOpen(
  db: Db,
  fence: TAttemptFence,
  input: { number: number; url: string; via: "created" | "adopted" },
) {
  return db.$transaction(async (tx) => {
    await updateFenced(tx, fence, {
      state: "open",
      reconcileState: input.via,
      number: input.number,
      url: input.url,
      lastError: null,
      nextAttemptAt: null,
      leaseTakenAt: null,
    });
    await transitionTaskIn(tx, {
      taskId: fence.taskId,
      from: "pr_pending",
      to: "pr_open",
      reason: `pull request #${input.number} ${input.via}`,
    });
  });
}

export async function finishFailed(
  db: Db,
  fence: TAttemptFence,
  input: { reconcileState: TReconcileState; reason: string },
) {
  const reason = boundLastError(input.reason);
  return db.$transaction(async (tx) => {
    await updateFenced(tx, fence, {
      state: "failed",
      reconcileState: input.reconcileState,
      lastError: reason,
      nextAttemptAt: null,
      leaseTakenAt: null,
    });
    await transitionTaskIn(tx, {
      taskId: fence.taskId,
      from: "pr_pending",
      to: "pr_failed",
      reason,
      errorCode: "PUBLISH_FAILED",
    });
  });
}

/** Stays pr_pending: records why and when the next attempt (which reconciles first) is due. */
export async function finishPending(
  db: Db,
  fence: TAttemptFence,
  input: { reconcileState?: TReconcileState; reason: string; nextAttemptAt: Date },
) {
  const reason = boundLastError(input.reason);
  return db.$transaction(async (tx) => {
    await updateFenced(tx, fence, {
      ...(input.reconcileState ? { reconcileState: input.reconcileState } : {}),
      lastError: reason,
      nextAttemptAt: input.nextAttemptAt,
      leaseTakenAt: null,
    });
    await recordAudit(tx, {
      actorId: null,
      action: "publication.attempt_pending",
      targetType: "task",
      targetId: fence.taskId,
      detail: {
        attempt: fence.attempt,
        reconcileState: input.reconcileState ?? null,
        reason,
        nextAttemptAt: input.nextAttemptAt.toISOString(),
      },
    });
  });
}

/** A graceful stop (abort) hands the publication back at once instead of waiting out the lease. */
export async function releaseAttempt(db: Db, fence: TAttemptFence): Promise<void> {
  await db.pullRequest.updateMany({
    where: { id: fence.pullRequestId, state: "pending", attempts: fence.attempt },
    data: { nextAttemptAt: null, leaseTakenAt: null },
  });
}

/**
 * Hands back a lease whose holder died mid-attempt, so publication resumes at once instead of
 * after ATTEMPT_LEASE_MS. Only for a caller that holds the task's worker lock (the lifecycle's
 * publish step): with that lock held no live attempt of this task can exist, so a lease still
 * taken belongs to a dead worker. The next attempt reconciles first, as always.
 */
export async function releaseAbandonedLease(db: Db, taskId: string): Promise<boolean> {
  return db.$transaction(async (tx) => {
    const released = await tx.pullRequest.updateMany({
      where: { taskId, state: "pending", leaseTakenAt: { not: null } },
      data: { leaseTakenAt: null, nextAttemptAt: null },
    });
    if (released.count > 0)
      await recordAudit(tx, {
        actorId: null,
        action: "publication.lease_released",
        targetType: "task",
        targetId: taskId,
        detail: { reason: "the previous attempt's worker stopped mid-attempt" },
      });
    return released.count > 0;
  });
}
