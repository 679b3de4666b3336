/**
 * The teacher's queue: candidates waiting for review, oldest first, with the status of their
 * trusted evidence (a failing or stale one is still listed: it needs a decision too).
 */
import type { Db } from "../db/client";
import { getActiveManifest } from "../verify/trusted-manifests";
import { readLatestEvidence } from "./evidence-view";

export type TReviewQueueItem = { candidateId: string; taskId: string; repository: string; issueNumber: number; issueTitle: string; waitingSince: Date; evidenceStatus: string };

export async function listReviewQueue(db: Db, limit = 100): Promise<TReviewQueueItem[]> {
  const tasks = await db.task.findMany({
    where: { state: "review_pending" },
    orderBy: { updatedAt: "asc" },
    take: limit,
    include: { repository: { select: { name: true } }, candidates: true },
  });
  const activeDigest = (await getActiveManifest(db))?.digest ?? null;
  const items: TReviewQueueItem[] = [];
  for (const task of tasks) {
    const candidate = task.candidates[0];
    if (!candidate) continue;
    const evidence = await readLatestEvidence(db, candidate, activeDigest);
    items.push({ candidateId: candidate.id, taskId: task.id, repository: task.repository.name, issueNumber: task.issueNumber, issueTitle: task.issueTitle, waitingSince: task.updatedAt, evidenceStatus: evidence.assessment.status });
  }
  return items;
}
