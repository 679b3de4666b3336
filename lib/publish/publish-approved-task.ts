/**
 * Publishes an approved task as exactly one pull request — reconcile first, never duplicate.
 *
 * Seed 000: "PR provider timeouts or ambiguous outcomes remain pending until provider state is
 * reconciled by candidate identity; retries must not create duplicate PRs." So every attempt
 * starts by asking the provider what already exists for the candidate's branch and base, and
 * only then pushes and creates; a timeout or 5xx after a create left is never read as "not
 * created" (that is how duplicates happen) nor as "created" (a false success): the task stays
 * pr_pending and the next attempt reconciles. Renovate and Dependabot work the same way: look
 * the PR up by branch first, read GitHub's 422 "already exists" as a lost race, reconcile after
 * a gateway timeout.
 *
 * Safe to call any number of times, concurrently, from any number of workers: the task
 * transition is compare-and-set, one attempt at a time holds a lease (PullRequest.attempts is
 * its fencing token), progress is persisted in PullRequest.reconcileState before each next side
 * effect, and the provider side is idempotent by construction (create-only push; one open PR per
 * head and base).
 */
import type { Db } from "../db/client";
import { getEnv } from "../env";
import { AppError, isAppError } from "../errors";
import { crashIfRequested } from "../tasks/crash-points";
import { logWarn } from "../log";
import { checkPublishApproval } from "./approval";
import { candidateRepoPathFor, checkCandidateCommit } from "../candidate/candidate-git";
import {
  claimAttempt,
  finishFailed,
  finishOpen,
  finishPending,
  isSuperseded,
  loadPublicationContext,
  releaseAttempt,
  saveProgress,
  startPublicationIn,
  type TAttemptFence,
  type TPullRequestRow,
} from "./publication.repo";
import { failureOf, type PublicationProvider, type TProviderPull, type TPublishTarget } from "./publication-provider";
import { buildPullRequestText } from "./pull-request-text";
import { matchPullToCandidate, retryDelayMs, type TReconcileState } from "./reconcile";

export type TPublishApprovedTaskDeps = {
  db: Db;
  provider: PublicationProvider;
  /** where the candidate repositories live; default DATA_DIR */
  dataDir?: string;
  now?: () => Date;
};

export type TPublishApprovedTaskInput = {
  taskId: string;
  /** a graceful stop (worker shutdown): the attempt ends, the lease is handed back */
  signal?: AbortSignal;
  /** called after each step is persisted (logging, progress streams) */
  onProgress?: (step: TReconcileState) => void;
};

export type TPublishResult =
  | { kind: "open"; number: number; url: string; via: "created" | "adopted" | "already_open" }
  | { kind: "pending"; reason: string; nextAttemptAt: Date | null; attempts: number }
  | { kind: "failed"; reason: string };

type TAttemptContext = {
  db: Db;
  fence: TAttemptFence;
  pull: TPullRequestRow;
  provider: PublicationProvider;
  target: TPublishTarget;
  headSha: string;
  baseSha: string;
  sourceGitDir: string;
  text: { title: string; body: string };
  now: () => Date;
  signal?: AbortSignal;
  onProgress?: (step: TReconcileState) => void;
};

export async function publishApprovedTask(
  deps: TPublishApprovedTaskDeps,
  input: TPublishApprovedTaskInput,
): Promise<TPublishResult> {
  const { db, provider } = deps;
  const { taskId } = input;
  const now = deps.now ?? (() => new Date());
  input.signal?.throwIfAborted();

  let context = await loadPublicationContext(db, taskId);
  if (!context) throw new AppError("NOT_FOUND", `Task ${taskId} does not exist.`);
  const settled = settledResult(context.task.state, context.task.pullRequest);
  if (settled) return settled;
  if (context.task.state !== "approved" && context.task.state !== "pr_pending") {
    throw new AppError(
      "PUBLISH_NOT_APPROVED",
      `Task ${taskId} is ${context.task.state}; only approved tasks are published.`,
    );
  }
  // Checked on every call, not only the first: publication must rest on an approval of the
  // candidate's exact head SHA at the moment the token is used.
  const approval = checkPublishApproval({ ...context, pullRequest: context.task.pullRequest });
  if (approval.kind === "refused") throw new AppError("PUBLISH_NOT_APPROVED", approval.reason);
  const candidate = context.candidate!;
  const decision = approval.decision;

  if (context.task.state === "approved") {
    try {
      await db.$transaction((tx) =>
        startPublicationIn(tx, {
          taskId,
          candidateId: candidate.id,
          decisionId: decision.id,
          headSha: candidate.headSha,
          branch: candidate.branch,
          baseRef: candidate.baseRef,
          repository: candidate.repository,
          provider: provider.name,
        }),
      );
    } catch (error) {
      // A concurrent call moved it first; carry on from whatever state it left.
      if (!(isAppError(error) && error.code === "STATE_CONFLICT") && !isUniqueViolation(error)) throw error;
    }
    context = (await loadPublicationContext(db, taskId))!;
    const settledNow = settledResult(context.task.state, context.task.pullRequest);
    if (settledNow) return settledNow;
  }
  const pull = context.task.pullRequest;
  if (context.task.state !== "pr_pending" || !pull)
    throw new AppError("STATE_CONFLICT", `Task ${taskId} is ${context.task.state}, not pr_pending.`);

  const fence = await claimAttempt(db, pull, now());
  if (!fence) return currentResult(db, taskId);

  const attempt: TAttemptContext = {
    db,
    fence,
    pull,
    provider,
    target: {
      repository: candidate.repository,
      cloneUrl: context.task.repository.cloneUrl,
      branch: candidate.branch,
      baseRef: candidate.baseRef,
    },
    headSha: candidate.headSha,
    baseSha: candidate.baseSha,
    sourceGitDir: candidateRepoPathFor(deps.dataDir ?? getEnv().dataDir, candidate.repository),
    text: buildPullRequestText({
      taskId,
      issueNumber: context.task.issueNumber,
      issueTitle: context.task.issueTitle,
      candidateId: candidate.id,
      headSha: candidate.headSha,
      baseRef: candidate.baseRef,
      baseSha: candidate.baseSha,
      evidenceDigest: decision.evidence.digest,
      manifestDigest: decision.manifestDigest,
      teacherName: decision.teacher.name,
      rounds: context.rounds,
    }),
    now,
    signal: input.signal,
    onProgress: input.onProgress,
  };
  try {
    return await runAttempt(attempt);
  } catch (error) {
    if (isSuperseded(error)) return currentResult(db, taskId);
    if (input.signal?.aborted) {
      await releaseAttempt(db, fence).catch(() => undefined);
      throw error;
    }
    return endAmbiguous(attempt, pull.reconcileState as TReconcileState, error);
  }
}

/**
 * One attempt: reconcile, then (only if nothing exists) push and create. The three reads before
 * the push — the provider's pull requests for the branch, its remote branch, the local check of
 * the candidate commit — have no side effects and do not depend on each other, so they are sent
 * together (issue 29, item 3); their answers are still acted on in that order, and nothing is
 * written before the first of them has decided.
 */
async function runAttempt(attempt: TAttemptContext): Promise<TPublishResult> {
  const { provider, target, signal } = attempt;
  let state = attempt.pull.reconcileState as TReconcileState;

  const remoteRead = provider.readRemoteBranch(target, signal);
  const localCheck = checkCandidateCommit({
    gitDir: attempt.sourceGitDir,
    branch: target.branch,
    baseSha: attempt.baseSha,
    headSha: attempt.headSha,
  });
  // Awaited below unless the reconcile decides first; a failure that is never awaited is not an error.
  remoteRead.catch(() => undefined);
  localCheck.catch(() => undefined);

  const found = await reconcile(attempt);
  if (found) return found;
  signal?.throwIfAborted();

  const remoteSha = await remoteRead;
  if (remoteSha !== null && remoteSha !== attempt.headSha) {
    return endFailed(
      attempt,
      "conflict",
      `The remote branch ${target.branch} is at ${remoteSha}, not the approved ${attempt.headSha}; nothing was overwritten.`,
    );
  }
  if (remoteSha === null) {
    const check = await localCheck;
    if (check.kind === "mismatch") return endFailed(attempt, "failed", check.reason);
    signal?.throwIfAborted();
    const pushed = await provider.pushBranch({
      target,
      headSha: attempt.headSha,
      sourceGitDir: attempt.sourceGitDir,
      signal,
    });
    if (pushed.kind === "rejected") {
      // Someone created the branch between our read and our push; the next attempt reads it.
      return endPending(
        attempt,
        undefined,
        `The remote refused to create ${target.branch} (it appeared meanwhile): ${pushed.detail}`,
      );
    }
  }
  if (state === "not_pushed" || remoteSha === null) {
    state = "pushed";
    await step(attempt, state);
  }

  // Persisted before the request leaves: from here on a pull request may exist even if we
  // never hear back, and a resumed attempt must look before it creates.
  await step(attempt, "create_sent");
  const created = await provider.createPullRequest({
    target,
    title: attempt.text.title,
    body: attempt.text.body,
    signal,
  });
  if (created.kind === "created") return settleWithPull(attempt, created.pull, "created");
  // 422 "already exists": we lost a race (or our own earlier create landed). Reconcile.
  const adopted = await reconcile(attempt);
  if (adopted) return adopted;
  return endPending(
    attempt,
    "ambiguous",
    `The provider says a pull request already exists but none is visible yet: ${created.message}`,
  );
}

/** Looks the candidate's pull request up by head branch and base; ends the attempt if one decides it. */
async function reconcile(attempt: TAttemptContext): Promise<TPublishResult | undefined> {
  const pulls = await attempt.provider.findPullRequests(attempt.target, attempt.signal);
  const match = matchPullToCandidate(pulls, attempt.headSha);
  switch (match.kind) {
    case "none":
      return undefined;
    case "match":
      return settleWithPull(attempt, match.pull, "adopted");
    case "mismatch":
      return endFailed(
        attempt,
        "conflict",
        `Pull request #${match.pull.number} for ${attempt.target.branch} is at ${match.pull.headSha}, not the approved ${attempt.headSha}; nothing was changed.`,
      );
    case "closed_match":
      return endFailed(
        attempt,
        "conflict",
        `Pull request #${match.pull.number} for this candidate was closed without merging; opening another would duplicate it.`,
      );
  }
}

async function settleWithPull(
  attempt: TAttemptContext,
  pull: TProviderPull,
  via: "created" | "adopted",
): Promise<TPublishResult> {
  if (pull.headSha !== attempt.headSha || pull.headRef !== attempt.target.branch) {
    return endFailed(
      attempt,
      "conflict",
      `Pull request #${pull.number} points at ${pull.headSha}, not the approved ${attempt.headSha}.`,
    );
  }
  await finishOpen(attempt.db, attempt.fence, { number: pull.number, url: pull.url, via });
  attempt.onProgress?.(via);
  return { kind: "open", number: pull.number, url: pull.url, via };
}

async function step(attempt: TAttemptContext, state: TReconcileState): Promise<void> {
  await saveProgress(attempt.db, attempt.fence, state);
  crashIfRequested(`publish:${state}`);
  attempt.pull = { ...attempt.pull, reconcileState: state };
  attempt.onProgress?.(state);
  attempt.signal?.throwIfAborted();
}

async function endFailed(
  attempt: TAttemptContext,
  reconcileState: TReconcileState,
  reason: string,
): Promise<TPublishResult> {
  await finishFailed(attempt.db, attempt.fence, { reconcileState, reason });
  attempt.onProgress?.(reconcileState);
  return { kind: "failed", reason };
}

async function endPending(
  attempt: TAttemptContext,
  reconcileState: TReconcileState | undefined,
  reason: string,
): Promise<TPublishResult> {
  const nextAttemptAt = new Date(attempt.now().getTime() + retryDelayMs(attempt.fence.attempt));
  await finishPending(attempt.db, attempt.fence, { reconcileState, reason, nextAttemptAt });
  return { kind: "pending", reason, nextAttemptAt, attempts: attempt.fence.attempt };
}

/**
 * A provider failure mid-attempt. A definite refusal (bad token, missing repository) ends the
 * publication visibly. Anything else is ambiguous; if a create may have left, look once more
 * right away (the provider usually has the answer our connection lost), else stay pending.
 */
async function endAmbiguous(
  attempt: TAttemptContext,
  previous: TReconcileState,
  error: unknown,
): Promise<TPublishResult> {
  const message = isAppError(error) ? error.message : "An unexpected error interrupted the attempt.";
  if (!isAppError(error))
    logWarn("publication attempt failed unexpectedly", {
      taskId: attempt.fence.taskId,
      attempt: attempt.fence.attempt,
      error: String(error),
    });
  const state = attempt.pull.reconcileState as TReconcileState;
  if (failureOf(error) === "refused") return endFailed(attempt, "failed", message);
  const mayHaveCreated =
    state === "create_sent" || state === "ambiguous" || previous === "create_sent" || previous === "ambiguous";
  if (mayHaveCreated) {
    try {
      const found = await reconcile(attempt);
      if (found) return found;
    } catch (lookupError) {
      if (isSuperseded(lookupError)) throw lookupError;
      // The lookup is as unreachable as the create was; the next attempt tries again.
    }
  }
  return endPending(attempt, mayHaveCreated ? "ambiguous" : undefined, message);
}

function settledResult(state: string, pull: TPullRequestRow | null): TPublishResult | undefined {
  if (state === "pr_open" && pull?.number != null && pull.url)
    return { kind: "open", number: pull.number, url: pull.url, via: "already_open" };
  if (state === "pr_failed") return { kind: "failed", reason: pull?.lastError ?? "Publication failed." };
  return undefined;
}

/** What a caller that did not get the lease should report: the row as it stands. */
async function currentResult(db: Db, taskId: string): Promise<TPublishResult> {
  const task = await db.task.findUniqueOrThrow({ where: { id: taskId }, include: { pullRequest: true } });
  const settled = settledResult(task.state, task.pullRequest);
  if (settled) return settled;
  const pull = task.pullRequest;
  return {
    kind: "pending",
    reason: pull?.lastError ?? "Another attempt is in progress.",
    nextAttemptAt: pull?.nextAttemptAt ?? null,
    attempts: pull?.attempts ?? 0,
  };
}

function isUniqueViolation(error: unknown): boolean {
  return typeof error === "object" && error !== null && (error as { code?: unknown }).code === "P2002";
}
