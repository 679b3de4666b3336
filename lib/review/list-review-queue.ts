/**
 * The teacher's queue: candidates waiting for review, oldest first, with the status of their
 * trusted evidence (a failing or stale one is still listed: it needs a decision too). A task's
 * entry is its latest round's candidate (issue 14). Paged, and filtered by repository and by
 * round kind (first rounds, or revisions that answer a teacher's feedback).
 */
import { z } from "zod";
import type { Db } from "../db/client";
import type { Prisma } from "../db/generated/client";
import { parseOrThrow } from "../parse-or-throw";
import { getActiveManifest } from "../verify/trusted-manifests";
import { readLatestEvidence } from "./evidence-view";

export type TReviewQueueItem = {
  candidateId: string;
  taskId: string;
  repository: string;
  issueNumber: number;
  issueTitle: string;
  round: number;
  waitingSince: Date;
  evidenceStatus: string;
  /** an attempt of a group (issue 26): the queue shows the group once, with its comparison */
  attemptGroupId: string | null;
};

export const REVIEW_PAGE_SIZE = 25;

export const ZReviewQueueQuerySchema = z
  .object({
    repository: z.string().trim().max(200).optional().catch(undefined),
    rounds: z.enum(["all", "first", "revisions"]).catch("all").default("all"),
    page: z.coerce.number().int().min(1).max(10_000).catch(1).default(1),
  })
  .strip();

export type TReviewQueueQuery = z.input<typeof ZReviewQueueQuerySchema>;

export async function listReviewQueue(deps: { db: Db }, input: TReviewQueueQuery = {}) {
  const { db } = deps;
  const query = parseOrThrow(ZReviewQueueQuerySchema, input, {
    code: "VALIDATION_FAILED",
    label: "review queue query",
  });
  const where: Prisma.TaskWhereInput = {
    state: "review_pending",
    // a qualification probe's task waits here for an instant before the probe closes it: never a teacher's work
    probeRunId: null,
    ...(query.repository ? { repository: { name: query.repository.toLowerCase() } } : {}),
    ...(query.rounds === "first" ? { round: 1 } : query.rounds === "revisions" ? { round: { gt: 1 } } : {}),
  };
  const [total, tasks, repositories] = await Promise.all([
    db.task.count({ where }),
    db.task.findMany({
      where,
      orderBy: [{ updatedAt: "asc" }, { id: "asc" }],
      skip: (query.page - 1) * REVIEW_PAGE_SIZE,
      take: REVIEW_PAGE_SIZE,
      include: { repository: { select: { name: true } }, candidates: { orderBy: { round: "desc" }, take: 1 } },
    }),
    db.targetRepository.findMany({
      where: { probeRunId: null },
      select: { name: true },
      orderBy: { name: "asc" },
      take: 500,
    }),
  ]);
  const activeDigest = (await getActiveManifest(db))?.digest ?? null;
  const items: TReviewQueueItem[] = [];
  for (const task of tasks) {
    const candidate = task.candidates[0];
    if (!candidate || candidate.round !== task.round) continue;
    const evidence = await readLatestEvidence(db, candidate, activeDigest);
    items.push({
      candidateId: candidate.id,
      taskId: task.id,
      repository: task.repository.name,
      issueNumber: task.issueNumber,
      issueTitle: task.issueTitle,
      round: task.round,
      waitingSince: task.updatedAt,
      evidenceStatus: evidence.assessment.status,
      attemptGroupId: task.attemptGroupId,
    });
  }
  return {
    items,
    total,
    page: query.page,
    pageSize: REVIEW_PAGE_SIZE,
    query,
    repositories: repositories.map((r) => r.name),
  };
}
