/**
 * The teacher's history (issue 14): every review decision — the teacher's own or everyone's —
 * newest first, with its task, round, verdict, comment, the status its evidence had, and the
 * task's pull request. Filters: repository, verdict, a date range (UTC days, inclusive); paged.
 */
import { z } from "zod";
import { can } from "../auth/permissions";
import type { Actor } from "../contract/actor";
import type { Db } from "../db/client";
import type { Prisma } from "../db/generated/client";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";

export const HISTORY_PAGE_SIZE = 25;

const ZDay = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/)
  .refine((v) => !Number.isNaN(Date.parse(`${v}T00:00:00Z`)));

export const ZReviewHistoryQuerySchema = z
  .object({
    scope: z.enum(["mine", "all"]).catch("all").default("all"),
    repository: z.string().trim().max(200).optional().catch(undefined),
    verdict: z.enum(["approve", "reject", "request_changes"]).optional().catch(undefined),
    from: ZDay.optional().catch(undefined),
    to: ZDay.optional().catch(undefined),
    page: z.coerce.number().int().min(1).max(10_000).catch(1).default(1),
  })
  .strip();

export type TReviewHistoryQuery = z.input<typeof ZReviewHistoryQuerySchema>;

export type TReviewHistoryItem = {
  decisionId: string;
  decidedAt: Date;
  teacher: string;
  isMine: boolean;
  taskId: string;
  candidateId: string;
  repository: string;
  issueNumber: number;
  issueTitle: string;
  round: number;
  verdict: "approve" | "reject" | "request_changes";
  comment: string;
  /** the evidence the decision was bound to: pass or fail when it was made */
  evidenceStatus: "pass" | "fail";
  pullRequest: {
    state: "pending" | "open" | "failed";
    number: number | null;
    url: string | null;
    isFromThisRound: boolean;
  } | null;
};

const DAY_MS = 24 * 3600 * 1000;

export async function listReviewHistory(deps: { db: Db }, input: TReviewHistoryQuery & { actor: Actor }) {
  const { db } = deps;
  if (!can(input.actor, "review.view")) throw new AppError("NOT_FOUND", "Not found.");
  const { actor, ...fields } = input;
  const query = parseOrThrow(ZReviewHistoryQuerySchema, fields, { code: "VALIDATION_FAILED", label: "history query" });
  const createdAt: Prisma.DateTimeFilter = {};
  if (query.from) createdAt.gte = new Date(`${query.from}T00:00:00Z`);
  if (query.to) createdAt.lt = new Date(Date.parse(`${query.to}T00:00:00Z`) + DAY_MS);
  const where: Prisma.ReviewDecisionWhereInput = {
    ...(query.scope === "mine" ? { teacherId: actor.userId } : {}),
    ...(query.verdict ? { verdict: query.verdict } : {}),
    ...(query.repository ? { candidate: { repository: query.repository.toLowerCase() } } : {}),
    ...(query.from || query.to ? { createdAt } : {}),
  };
  const [total, rows] = await Promise.all([
    db.reviewDecision.count({ where }),
    db.reviewDecision.findMany({
      where,
      orderBy: [{ createdAt: "desc" }, { id: "desc" }],
      skip: (query.page - 1) * HISTORY_PAGE_SIZE,
      take: HISTORY_PAGE_SIZE,
      include: {
        teacher: { select: { email: true, name: true } },
        evidence: { select: { isPass: true } },
        candidate: { select: { round: true, repository: true, issueNumber: true } },
        task: {
          select: {
            issueTitle: true,
            pullRequest: { select: { state: true, number: true, url: true, candidateId: true } },
          },
        },
      },
    }),
  ]);
  const items: TReviewHistoryItem[] = rows.map((row) => ({
    decisionId: row.id,
    decidedAt: row.createdAt,
    teacher: row.teacher.name || row.teacher.email,
    isMine: row.teacherId === actor.userId,
    taskId: row.taskId,
    candidateId: row.candidateId,
    repository: row.candidate.repository,
    issueNumber: row.candidate.issueNumber,
    issueTitle: row.task.issueTitle,
    round: row.candidate.round,
    verdict: row.verdict,
    comment: row.comment,
    evidenceStatus: row.evidence.isPass ? "pass" : "fail",
    pullRequest: row.task.pullRequest
      ? {
          state: row.task.pullRequest.state,
          number: row.task.pullRequest.number,
          url: row.task.pullRequest.url,
          isFromThisRound: row.task.pullRequest.candidateId === row.candidateId,
        }
      : null,
  }));
  return { items, total, page: query.page, pageSize: HISTORY_PAGE_SIZE, query };
}
