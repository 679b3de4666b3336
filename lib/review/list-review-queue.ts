/**
 * The teacher's queue: tasks waiting for review, oldest first.
 */
import { getDb } from "../db/client";

export type TReviewQueueItem = { taskId: string; repository: string; issueNumber: number; issueTitle: string; waitingSince: Date };

export async function listReviewQueue(limit = 100): Promise<TReviewQueueItem[]> {
  const db = await getDb();
  const tasks = await db.task.findMany({
    where: { state: "review_pending" },
    orderBy: { updatedAt: "asc" },
    take: limit,
    include: { repository: { select: { name: true } } },
  });
  return tasks.map((t) => ({ taskId: t.id, repository: t.repository.name, issueNumber: t.issueNumber, issueTitle: t.issueTitle, waitingSince: t.updatedAt }));
}
