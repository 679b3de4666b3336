/**
 * Regrade (issue 26): after the trusted manifest changed, an operator re-runs the trusted checks for
 * every candidate of one repository still waiting for a decision. Each is an ordinary
 * re-verification (reverify-task.ts: the task goes back to `imported` and a worker runs the checks
 * on a fresh verifier guest when a machine is free, under the machine cap) — its own queued work,
 * one task at a time, so one refusal (the task moved on meanwhile) does not stop the others. A
 * decided candidate (approved, rejected, published, not chosen) keeps the evidence it was decided
 * on: it is listed as skipped. What each candidate's verdict was before is recorded in the audit
 * row, so the summary can show which verdicts changed (pass → fail, fail → pass).
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import { can } from "../auth/permissions";
import type { Actor } from "../contract/actor";
import type { Db } from "../db/client";
import { AppError, isAppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { reverifyTask } from "./reverify-task";

export const ZRegradeRepositorySchema = z.object({ repositoryId: z.uuid() }).strict();

export const REGRADE_AUDIT_ACTION = "repository.regrade";

const ZRegradeDetailSchema = z.object({
  before: z.array(
    z.object({
      taskId: z.string(),
      candidateId: z.string(),
      evidenceId: z.string().nullable(),
      isPass: z.boolean().nullable(),
    }),
  ),
  skipped: z.array(z.object({ taskId: z.string(), reason: z.string() })),
});

/** The latest evidence of each task's latest-round candidate. */
async function readLatestVerdicts(db: Db, repositoryId: string) {
  const tasks = await db.task.findMany({
    where: { repositoryId, probeRunId: null, candidates: { some: {} } },
    orderBy: { createdAt: "asc" },
    take: 1000,
    select: {
      id: true,
      state: true,
      round: true,
      candidates: { orderBy: { round: "desc" }, take: 1, select: { id: true } },
    },
  });
  const candidateIds = tasks.map((t) => t.candidates[0]!.id);
  const evidence = await db.verificationEvidence.findMany({
    where: { candidateId: { in: candidateIds } },
    orderBy: { createdAt: "desc" },
    distinct: ["candidateId"],
    select: { id: true, candidateId: true, isPass: true, createdAt: true },
  });
  return tasks.map((t) => {
    const candidateId = t.candidates[0]!.id;
    const latest = evidence.find((e) => e.candidateId === candidateId) ?? null;
    return { taskId: t.id, state: t.state, candidateId, evidence: latest };
  });
}

export async function regradeRepository(
  deps: { db: Db },
  { actor, ...fields }: z.input<typeof ZRegradeRepositorySchema> & { actor: Actor },
) {
  if (!can(actor, "task.reverify")) throw new AppError("NOT_FOUND", "No such repository.");
  const input = parseOrThrow(ZRegradeRepositorySchema, fields, { code: "VALIDATION_FAILED", label: "regrade" });
  const { db } = deps;
  const repository = await db.targetRepository.findUnique({ where: { id: input.repositoryId } });
  if (!repository) throw new AppError("NOT_FOUND", "No such repository.");
  const verdicts = await readLatestVerdicts(db, repository.id);
  const before: z.infer<typeof ZRegradeDetailSchema>["before"] = [];
  const skipped: z.infer<typeof ZRegradeDetailSchema>["skipped"] = [];
  for (const v of verdicts) {
    if (v.state !== "review_pending") {
      skipped.push({ taskId: v.taskId, reason: `${v.state}: decided or not waiting for review` });
      continue;
    }
    try {
      await reverifyTask({ db }, { actor, taskId: v.taskId });
      before.push({
        taskId: v.taskId,
        candidateId: v.candidateId,
        evidenceId: v.evidence?.id ?? null,
        isPass: v.evidence?.isPass ?? null,
      });
    } catch (error) {
      // The task moved on between the read and its re-verification (a teacher decided): skipped, visibly.
      if (!(isAppError(error) && error.code === "STATE_CONFLICT")) throw error;
      skipped.push({ taskId: v.taskId, reason: error.message });
    }
  }
  await recordAudit(db, {
    actorId: actor.userId,
    action: REGRADE_AUDIT_ACTION,
    targetType: "repository",
    targetId: repository.id,
    detail: { repository: repository.name, before, skipped },
  });
  return { repository: repository.name, queued: before.length, skipped: skipped.length };
}

export type TRegradeChange = "pass → fail" | "fail → pass" | "unchanged" | "first verdict" | "pending";

/** The latest regrade of the repository: each re-verified candidate's verdict before and now. */
export async function readRegradeSummary(deps: { db: Db }, input: { repositoryId: string }) {
  const { db } = deps;
  const audit = await db.auditLog.findFirst({
    where: { action: REGRADE_AUDIT_ACTION, targetType: "repository", targetId: input.repositoryId },
    orderBy: { id: "desc" },
    include: { actor: { select: { email: true } } },
  });
  if (!audit) return null;
  const detail = ZRegradeDetailSchema.safeParse(audit.detail);
  if (!detail.success) return null;
  const after = await db.verificationEvidence.findMany({
    where: { candidateId: { in: detail.data.before.map((b) => b.candidateId) }, createdAt: { gt: audit.createdAt } },
    orderBy: { createdAt: "desc" },
    distinct: ["candidateId"],
    select: { id: true, candidateId: true, isPass: true },
  });
  const rows = detail.data.before.map((b) => {
    const now = after.find((a) => a.candidateId === b.candidateId) ?? null;
    const change: TRegradeChange =
      now === null
        ? "pending"
        : b.isPass === true && !now.isPass
          ? "pass → fail"
          : b.isPass !== true && now.isPass
            ? "fail → pass"
            : "unchanged";
    return { ...b, afterEvidenceId: now?.id ?? null, afterIsPass: now?.isPass ?? null, change };
  });
  return {
    at: audit.createdAt,
    by: audit.actor?.email ?? null,
    rows,
    skipped: detail.data.skipped,
    changed: rows.filter((r) => r.change === "pass → fail" || r.change === "fail → pass").length,
  };
}
