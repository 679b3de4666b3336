/**
 * A teacher's decision, bound to exactly what the teacher saw: (candidate id, head SHA, evidence
 * id, manifest digest). A decision on anything else is stale and refused — someone re-verified,
 * or the manifest changed — and approval additionally needs evidence that is a pass right now,
 * and the teacher's acknowledgement of every file the page does not show in full (issue 27).
 * The decision row, the task transition and the worker's wake-up are one transaction.
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import type { Actor } from "../contract/actor";
import type { Db, DbTx } from "../db/client";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { can } from "../auth/permissions";
import { transitionTaskIn } from "../tasks/transition-task";
import { notifyWorkReady } from "../db/work-ready";
import type { TaskRunContext } from "../tasks/task-run-context";
import { chooseAttemptIn, lockAttemptGroupIn, refuseDecidedGroup } from "../attempts/choose-attempt";
import { releaseNotChosenAttempts } from "../attempts/release-not-chosen-attempts";
import { readSetting } from "../settings/operator-settings";
import { readLatestEvidence } from "./evidence-view";
import { digestFilesNotShown, type TFileNotShown } from "./files-not-shown";
import { readCandidateDiffCached } from "./read-candidate-diff-cached";

export const ZDecisionSchema = z
  .object({
    candidateId: z.string().regex(/^cand_[0-9a-f]{32}$/),
    headSha: z.string().regex(/^[0-9a-f]{40}$/),
    evidenceId: z.uuid(),
    manifestDigest: z.string().regex(/^[0-9a-f]{64}$/),
    verdict: z.enum(["approve", "reject", "request_changes"]),
    comment: z.string().trim().min(1, "A comment is required.").max(10_000),
    /** the teacher saw that this revision round changes nothing since the previous one (a checkbox) */
    acknowledgeNoChange: z.literal("on").optional(),
    /** the digest of the list of files not shown in full that the teacher acknowledged (a checkbox bound to that list) */
    acknowledgeNotShown: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
  })
  .strict();
export type TDecisionInput = z.infer<typeof ZDecisionSchema>;

const TARGET_STATE = { approve: "approved", reject: "rejected", request_changes: "changes_requested" } as const;

/**
 * Approval is of what the teacher can see: the server reads the same bounded diff the review page
 * shows. A diff that cannot be read refuses approval; a file not shown in full (cut by a budget,
 * beyond the file cap, content git would not print) refuses it unless the teacher acknowledged
 * exactly the list the page showed — an acknowledgement of another list (the candidate changed,
 * the limits changed) counts for nothing. Returns the acknowledged list, recorded with the decision.
 * Rejecting or requesting changes never needs the whole diff.
 */
async function refuseUnseenDiff(
  dataDir: string,
  candidate: { repository: string; baseSha: string; headSha: string },
  acknowledgedDigest: string | undefined,
): Promise<{ digest: string; files: TFileNotShown[] } | null> {
  // The same cached read the review page and its chunk route use: the teacher just opened this
  // diff, so a huge one is not read and parsed with git a second time to approve it.
  const { diff } = await readCandidateDiffCached(
    { dataDir },
    { repository: candidate.repository, baseSha: candidate.baseSha, headSha: candidate.headSha },
  ).catch((error: unknown) => {
    if (error instanceof AppError)
      throw new AppError(
        "REVIEW_DIFF_INCOMPLETE",
        `Approval is not possible: the diff cannot be read (${error.message}). Reject or request changes instead.`,
      );
    throw error;
  });
  const notShown = diff.filesNotShown ?? [];
  // A cut diff always names what it cut; if it ever does not, nothing can be acknowledged (fail closed).
  if (diff.isTruncated && notShown.length === 0)
    throw new AppError(
      "REVIEW_DIFF_INCOMPLETE",
      "Approval is not possible: the review page cannot show the whole diff. Reject or request changes instead.",
    );
  if (notShown.length === 0) return null;
  const digest = digestFilesNotShown(notShown);
  if (acknowledgedDigest !== digest) {
    throw new AppError(
      "REVIEW_DIFF_INCOMPLETE",
      `${notShown.length} file${notShown.length === 1 ? " is" : "s are"} not shown in full on the review page (listed above the diff). ` +
        `Tick "I acknowledge these files are not shown in full" to approve anyway, or reject or request changes.`,
      { filesNotShown: notShown.length },
    );
  }
  return { digest, files: notShown };
}

/**
 * A revision round whose snapshot equals its parent's (same files, modes and bytes) brings no new
 * work; the per-file digests of both immutable records decide it without reading git.
 */
export async function isUnchangedSinceParent(
  tx: Db | DbTx,
  candidate: { parentCandidateId: string | null; fileDigests: unknown },
): Promise<boolean> {
  if (!candidate.parentCandidateId) return false;
  const parent = await tx.candidate.findUnique({
    where: { id: candidate.parentCandidateId },
    select: { fileDigests: true },
  });
  return parent !== null && JSON.stringify(parent.fileDigests) === JSON.stringify(candidate.fileDigests);
}

export async function decideCandidate(
  deps: {
    db: Db;
    dataDir: string;
    /** where the attempts an approval ends give back their guests and capabilities (issue 26); absent = left to the orphan sweep */
    release?: Pick<TaskRunContext, "env" | "substrate">;
  },
  { actor, ...fields }: z.input<typeof ZDecisionSchema> & { actor: Actor },
) {
  const { db } = deps;
  // Not the teacher's to see = not found, never "forbidden".
  if (!can(actor, "review.decide")) throw new AppError("NOT_FOUND", "No such candidate.");
  const input = parseOrThrow(ZDecisionSchema, fields, { code: "VALIDATION_FAILED", label: "review decision" });
  let acknowledgedNotShown: Awaited<ReturnType<typeof refuseUnseenDiff>> = null;
  if (input.verdict === "approve") {
    // A candidate's repository, base and head never change, so reading git outside the transaction is safe.
    const seen = await db.candidate.findUnique({
      where: { id: input.candidateId },
      select: { repository: true, baseSha: true, headSha: true },
    });
    if (!seen) throw new AppError("NOT_FOUND", "No such candidate.");
    acknowledgedNotShown = await refuseUnseenDiff(deps.dataDir, seen, input.acknowledgeNotShown);
  }

  const outcome = await db.$transaction(async (tx) => {
    const candidate = await tx.candidate.findUnique({ where: { id: input.candidateId } });
    if (!candidate) throw new AppError("NOT_FOUND", "No such candidate.");
    // An attempt (issue 26): every decision in its group is serialised on the group row, taken
    // before the task's own lock (a task's group never changes, so reading it unlocked is safe).
    const { attemptGroupId } = await tx.task.findUniqueOrThrow({
      where: { id: candidate.taskId },
      select: { attemptGroupId: true },
    });
    if (attemptGroupId) refuseDecidedGroup(await lockAttemptGroupIn(tx, attemptGroupId), candidate.taskId);
    // Serialise decisions and re-verification on this task.
    await tx.$queryRaw`select id from "Task" where id = ${candidate.taskId}::uuid for update`;
    const task = await tx.task.findUniqueOrThrow({ where: { id: candidate.taskId } });
    // A decision binds to the latest round only (issue 14): a page of an earlier round is stale.
    if (candidate.round !== task.round) {
      throw new AppError(
        "REVIEW_STALE",
        `This page shows round ${candidate.round}, but the task is in round ${task.round} now. Open the latest round and decide there.`,
      );
    }
    if (task.state !== "review_pending")
      throw new AppError(
        "REVIEW_STALE",
        `This candidate is no longer waiting for review (the task is ${task.state}). Reload the page.`,
      );
    if (candidate.headSha !== input.headSha)
      throw new AppError("REVIEW_STALE", "The page shows another head SHA than the candidate's. Reload the page.");
    // Separation of duties: whoever asked for the work does not also sign it off, unless the operator turned the rule off.
    if (
      input.verdict === "approve" &&
      task.createdById === actor.userId &&
      (await readSetting({ db: tx }, { key: "review.separationOfDuties" })).enabled
    ) {
      throw new AppError(
        "REVIEW_SELF_APPROVAL",
        "You created this task, so another teacher must approve it (separation of duties). You can still reject it or request changes.",
      );
    }
    const evidence = await readLatestEvidence(tx, candidate);
    if (evidence.evidenceId !== input.evidenceId || evidence.manifestDigest !== input.manifestDigest) {
      throw new AppError(
        "REVIEW_STALE",
        "The trusted evidence changed since this page was loaded (someone re-verified). Reload the page and review the current evidence.",
      );
    }
    if (input.verdict === "approve" && evidence.assessment.status !== "pass") {
      const reasons = "reasons" in evidence.assessment ? evidence.assessment.reasons.join("; ") : "";
      throw new AppError(
        evidence.assessment.status === "stale" ? "REVIEW_STALE" : "EVIDENCE_NOT_PASSING",
        `Approval needs passing trusted evidence; this evidence is ${evidence.assessment.status}: ${reasons}`,
      );
    }
    if (input.verdict === "request_changes") {
      const { maxRounds } = await readSetting({ db: tx }, { key: "review.rounds" });
      if (task.round >= maxRounds) {
        throw new AppError(
          "REVIEW_ROUND_LIMIT",
          `This task is in round ${task.round} of at most ${maxRounds}: no further round can be requested. Approve or reject it.`,
        );
      }
    }
    if (
      input.verdict === "approve" &&
      input.acknowledgeNoChange !== "on" &&
      (await isUnchangedSinceParent(tx, candidate))
    ) {
      throw new AppError(
        "REVIEW_NO_CHANGE",
        `Round ${candidate.round} changes nothing since round ${candidate.round - 1}. Tick "I have seen that this round changes nothing" to approve it anyway.`,
      );
    }
    const decision = await tx.reviewDecision.create({
      data: {
        taskId: task.id,
        candidateId: candidate.id,
        headSha: candidate.headSha,
        evidenceId: input.evidenceId,
        manifestDigest: input.manifestDigest,
        verdict: input.verdict,
        comment: input.comment,
        teacherId: actor.userId,
      },
    });
    await transitionTaskIn(tx, {
      taskId: task.id,
      from: "review_pending",
      to: TARGET_STATE[input.verdict],
      reason: `${input.verdict} by ${actor.email}`,
    });
    // Approval (publication) and "Request changes" (the next round) are the worker's to carry on:
    // it hears of them the moment this transaction commits, not at its next sweep (issue 29).
    if (input.verdict !== "reject") await notifyWorkReady(tx, { kind: "task", id: task.id });
    // Approving one attempt ends the others; requesting changes or rejecting touches only this one.
    const { notChosenTaskIds } =
      input.verdict === "approve" && attemptGroupId
        ? await chooseAttemptIn(tx, { groupId: attemptGroupId, taskId: task.id, actor })
        : { notChosenTaskIds: [] as string[] };
    await recordAudit(tx, {
      actorId: actor.userId,
      action: `review.${input.verdict}`,
      targetType: "candidate",
      targetId: candidate.id,
      detail: {
        decisionId: decision.id,
        evidenceId: input.evidenceId,
        headSha: candidate.headSha,
        ...(acknowledgedNotShown ? { acknowledgedNotShown } : {}),
      },
    });
    return { ...decision, notChosenTaskIds };
  });
  if (deps.release && outcome.notChosenTaskIds.length > 0)
    await releaseNotChosenAttempts({ db, ...deps.release }, { taskIds: outcome.notChosenTaskIds });
  return outcome;
}
