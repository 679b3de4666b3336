/**
 * Everything the teacher's review page shows for one candidate: the identity block, the untrusted
 * issue text and guest report, the trusted evidence (re-checked now), the decision if any, and
 * the publication. A candidate that is not (yet) reviewable is NOT_FOUND for the teacher.
 */
import type { Db } from "../db/client";
import { hideOwnerUntilDecided } from "../attempts/read-attempt-rows";
import { AppError } from "../errors";
import { classifyProtectedPaths } from "../candidate/protected-paths";
import { getPublication } from "../publish/get-publication";
import { readSetting } from "../settings/operator-settings";
import { readLatestEvidence } from "./evidence-view";
import { readReviewRounds } from "./read-review-rounds";

export const REVIEWABLE_TASK_STATES = [
  "review_pending",
  "approved",
  "rejected",
  "changes_requested",
  "pr_pending",
  "pr_open",
  "pr_failed",
  // an attempt another attempt's approval ended (issue 26): its rounds stay readable, never decidable
  "not_chosen",
] as const;

export type TGuestReportView = {
  status: string;
  diagnostics: string;
  studentSummary: string | null;
  supplementalChecks: { name: string; command: string; exitCode: number | null; outputExcerpt: string }[];
};

function parseGuestReport(value: unknown): TGuestReportView | null {
  if (!value || typeof value !== "object") return null;
  const v = value as Record<string, unknown>;
  const checks = Array.isArray(v.supplementalChecks) ? v.supplementalChecks : [];
  return {
    status: String(v.status ?? "unknown"),
    diagnostics: String(v.diagnostics ?? ""),
    studentSummary: typeof v.studentSummary === "string" ? v.studentSummary : null,
    supplementalChecks: checks.slice(0, 20).map((c: Record<string, unknown>) => ({
      name: String(c.name ?? ""),
      command: String(c.command ?? ""),
      exitCode: typeof c.exitCode === "number" ? c.exitCode : null,
      outputExcerpt: String(c.outputExcerpt ?? ""),
    })),
  };
}

export async function getCandidateReview(deps: { db: Db }, input: { candidateId: string }) {
  const { db } = deps;
  const { candidateId } = input;
  if (!/^cand_[0-9a-f]{32}$/.test(candidateId)) throw new AppError("NOT_FOUND", "No such candidate.");
  const candidate = await db.candidate.findUnique({
    where: { id: candidateId },
    include: {
      task: {
        include: {
          repository: { select: { name: true } },
          agentProfileVersion: { include: { profile: true } },
          attemptGroup: { select: { id: true, chosenTaskId: true } },
          _count: { select: { decisions: true } },
        },
      },
      decisions: { include: { teacher: { select: { email: true } } } },
    },
  });
  // An earlier round (issue 14) stays readable whatever the task does now; the latest round is
  // reviewable once its task reached review.
  const isLatestRound = candidate?.round === candidate?.task.round;
  if (!candidate || (isLatestRound && !(REVIEWABLE_TASK_STATES as readonly string[]).includes(candidate.task.state)))
    throw new AppError("NOT_FOUND", "No such candidate.");
  const rounds = await readReviewRounds({ db }, { taskId: candidate.taskId, candidateId: candidate.id });
  const isAnonymous = (await readSetting({ db }, { key: "review.anonymous" })).enabled;
  const [evidence, publication, protectedPaths, roundReport] = await Promise.all([
    readLatestEvidence(db, candidate),
    getPublication({ db }, { taskId: candidate.taskId }),
    readSetting({ db }, { key: "publish.protectedPaths" }),
    db.guestRoundReport.findUnique({
      where: { taskId_round: { taskId: candidate.taskId, round: candidate.round } },
      select: { report: true },
    }),
  ]);
  // Protected paths the operator allowed for this repository still reach the target repository's
  // CI: the page shows them apart, above the diff, so the teacher sees them first.
  const changedPaths = Array.isArray(candidate.changedFiles)
    ? candidate.changedFiles.flatMap((f) =>
        f && typeof f === "object" && "path" in f && typeof f.path === "string" ? [f.path] : [],
      )
    : [];
  const publicationSensitivePaths = classifyProtectedPaths(
    protectedPaths,
    candidate.repository,
    changedPaths,
  ).sensitive;
  const decision = candidate.decisions[0] ?? null;
  return {
    candidate: {
      id: candidate.id,
      taskId: candidate.taskId,
      repository: candidate.repository,
      issueNumber: candidate.issueNumber,
      baseRef: candidate.baseRef,
      baseSha: candidate.baseSha,
      headSha: candidate.headSha,
      branch: candidate.branch,
      diffDigest: candidate.diffDigest,
      createdAt: candidate.createdAt,
      round: candidate.round,
      isLatestRound,
    },
    task: {
      id: candidate.task.id,
      state: candidate.task.state,
      issueTitle: candidate.task.issueTitle,
      prompt: candidate.task.prompt,
      round: candidate.task.round,
      // The agent profile version the task ran (issue 26); null = the operator default (guest.agent).
      agent: candidate.task.agentProfileVersion && {
        name: candidate.task.agentProfileVersion.profile.name,
        owner: candidate.task.agentProfileVersion.profile.owner,
        version: candidate.task.agentProfileVersion.version,
        codeDigest: candidate.task.agentProfileVersion.codeDigest,
      },
    },
    // The agent that did the work (issue 26); with anonymous review its owner stays hidden until a decision is recorded.
    agent: candidate.task.agentProfileVersion
      ? hideOwnerUntilDecided(
          {
            name: candidate.task.agentProfileVersion.profile.name,
            version: candidate.task.agentProfileVersion.version,
            owner: candidate.task.agentProfileVersion.profile.owner || null,
            decision: candidate.task._count.decisions > 0 ? "recorded" : null,
          },
          { isAnonymous: isAnonymous, isGroupDecided: Boolean(candidate.task.attemptGroup?.chosenTaskId) },
        )
      : null,
    attemptGroupId: candidate.task.attemptGroupId,
    // The report of the round this candidate answers (an earlier round keeps its own).
    guestReport: parseGuestReport(roundReport?.report),
    rounds,
    publicationSensitivePaths,
    evidence,
    decision: decision && {
      verdict: decision.verdict,
      comment: decision.comment,
      teacher: decision.teacher.email,
      createdAt: decision.createdAt,
      evidenceId: decision.evidenceId,
      headSha: decision.headSha,
      manifestDigest: decision.manifestDigest,
    },
    publication,
  };
}

export type TCandidateReview = Awaited<ReturnType<typeof getCandidateReview>>;
