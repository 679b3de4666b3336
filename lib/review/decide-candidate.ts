/**
 * A teacher's decision, bound to exactly what the teacher saw: (candidate id, head SHA, evidence
 * id, manifest digest). A decision on anything else is stale and refused — someone re-verified,
 * or the manifest changed — and approval additionally needs evidence that is a pass right now.
 * The decision row and the task transition are one transaction.
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import type { Actor } from "../auth/permissions";
import { can } from "../auth/permissions";
import { transitionTaskIn } from "../tasks/transition-task";
import { readLatestEvidence } from "./evidence-view";

export const ZDecisionSchema = z
  .object({
    candidateId: z.string().regex(/^cand_[0-9a-f]{32}$/),
    headSha: z.string().regex(/^[0-9a-f]{40}$/),
    evidenceId: z.uuid(),
    manifestDigest: z.string().regex(/^[0-9a-f]{64}$/),
    verdict: z.enum(["approve", "reject", "request_changes"]),
    comment: z.string().trim().min(1, "A comment is required.").max(10_000),
  })
  .strict();
export type TDecisionInput = z.infer<typeof ZDecisionSchema>;

const TARGET_STATE = { approve: "approved", reject: "rejected", request_changes: "changes_requested" } as const;

export async function decideCandidate(options: { db: Db; actor: Actor; input: unknown }) {
  const { db, actor } = options;
  // Not the teacher's to see = not found, never "forbidden".
  if (!can(actor, "review.decide")) throw new AppError("NOT_FOUND", "No such candidate.");
  const parsed = ZDecisionSchema.safeParse(options.input);
  if (!parsed.success) throw new AppError("VALIDATION_FAILED", parsed.error.issues[0]!.message);
  const input = parsed.data;

  return db.$transaction(async (tx) => {
    const candidate = await tx.candidate.findUnique({ where: { id: input.candidateId } });
    if (!candidate) throw new AppError("NOT_FOUND", "No such candidate.");
    // Serialise decisions and re-verification on this task.
    await tx.$queryRaw`select id from "Task" where id = ${candidate.taskId}::uuid for update`;
    const task = await tx.task.findUniqueOrThrow({ where: { id: candidate.taskId } });
    if (task.state !== "review_pending") throw new AppError("REVIEW_STALE", `This candidate is no longer waiting for review (the task is ${task.state}). Reload the page.`);
    if (candidate.headSha !== input.headSha) throw new AppError("REVIEW_STALE", "The page shows another head SHA than the candidate's. Reload the page.");
    const evidence = await readLatestEvidence(tx, candidate);
    if (evidence.evidenceId !== input.evidenceId || evidence.manifestDigest !== input.manifestDigest) {
      throw new AppError("REVIEW_STALE", "The trusted evidence changed since this page was loaded (someone re-verified). Reload the page and review the current evidence.");
    }
    if (input.verdict === "approve" && evidence.assessment.status !== "pass") {
      const reasons = "reasons" in evidence.assessment ? evidence.assessment.reasons.join("; ") : "";
      throw new AppError(evidence.assessment.status === "stale" ? "REVIEW_STALE" : "EVIDENCE_NOT_PASSING", `Approval needs passing trusted evidence; this evidence is ${evidence.assessment.status}: ${reasons}`);
    }
    const decision = await tx.reviewDecision.create({
      data: { taskId: task.id, candidateId: candidate.id, headSha: candidate.headSha, evidenceId: input.evidenceId, manifestDigest: input.manifestDigest, verdict: input.verdict, comment: input.comment, teacherId: actor.userId },
    });
    await transitionTaskIn(tx, { taskId: task.id, from: "review_pending", to: TARGET_STATE[input.verdict], reason: `${input.verdict} by ${actor.email}` });
    await recordAudit(tx, { actorId: actor.userId, action: `review.${input.verdict}`, targetType: "candidate", targetId: candidate.id, detail: { decisionId: decision.id, evidenceId: input.evidenceId, headSha: candidate.headSha } });
    return decision;
  });
}
