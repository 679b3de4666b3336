/**
 * The rounds of one task as the review page lists them (issue 14): each round's candidate, head,
 * decision and evidence status, oldest first; the feedback a round answers (the previous round's
 * "Request changes" and its line comments); and whether the round changes nothing since then.
 */
import type { Db } from "../db/client";
import { readSetting } from "../settings/operator-settings";
import { getActiveManifest } from "../verify/trusted-manifests";
import { isUnchangedSinceParent } from "./decide-candidate";
import { readLatestEvidence } from "./evidence-view";

export type TReviewRound = {
  round: number;
  candidateId: string;
  headSha: string;
  createdAt: Date;
  evidenceStatus: string;
  evidenceDigest: string | null;
  decision: {
    verdict: "approve" | "reject" | "request_changes";
    comment: string;
    teacher: string;
    createdAt: Date;
  } | null;
};

export async function readReviewRounds(deps: { db: Db }, input: { taskId: string; candidateId: string }) {
  const { db } = deps;
  const [rows, activeDigest, limit] = await Promise.all([
    db.candidate.findMany({
      where: { taskId: input.taskId },
      orderBy: { round: "asc" },
      include: { decisions: { include: { teacher: { select: { email: true } } } } },
    }),
    getActiveManifest(db).then((m) => m?.digest ?? null),
    readSetting({ db }, { key: "review.rounds" }),
  ]);
  const rounds: TReviewRound[] = [];
  for (const row of rows) {
    const evidence = await readLatestEvidence(db, row, activeDigest);
    const decision = row.decisions[0];
    rounds.push({
      round: row.round,
      candidateId: row.id,
      headSha: row.headSha,
      createdAt: row.createdAt,
      evidenceStatus: evidence.assessment.status,
      evidenceDigest: evidence.digest,
      decision: decision
        ? {
            verdict: decision.verdict,
            comment: decision.comment,
            teacher: decision.teacher.email,
            createdAt: decision.createdAt,
          }
        : null,
    });
  }
  const current = rows.find((r) => r.id === input.candidateId);
  const parent = current?.parentCandidateId ? rows.find((r) => r.id === current.parentCandidateId) : undefined;
  const answered = parent?.decisions.find((d) => d.verdict === "request_changes");
  return {
    rounds,
    maxRounds: limit.maxRounds,
    parent: parent ? { candidateId: parent.id, round: parent.round, headSha: parent.headSha } : null,
    /** the feedback this round answers: the previous round's "Request changes" comment */
    answers:
      answered && parent
        ? {
            round: parent.round,
            comment: answered.comment,
            teacher: answered.teacher.email,
            createdAt: answered.createdAt,
          }
        : null,
    isUnchangedSinceParent: current ? await isUnchangedSinceParent(db, current) : false,
  };
}

export type TReviewRounds = Awaited<ReturnType<typeof readReviewRounds>>;
