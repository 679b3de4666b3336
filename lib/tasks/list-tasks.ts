/**
 * Task lists for the operator: newest first, optionally filtered by state, keyset-paged.
 */
import { getDb } from "../db/client";
import type { TaskState } from "../db/generated/enums";

export type TTaskListItem = { id: string; repository: string; issueNumber: number; issueTitle: string; state: TaskState; createdAt: Date; errorSummary: string | null };

export async function listRecentTasks(options: { take: number; state?: TaskState; before?: Date }): Promise<{ items: TTaskListItem[]; nextBefore: Date | null }> {
  const db = await getDb();
  const rows = await db.task.findMany({
    where: { ...(options.state ? { state: options.state } : {}), ...(options.before ? { createdAt: { lt: options.before } } : {}) },
    orderBy: { createdAt: "desc" },
    take: options.take + 1,
    include: { repository: { select: { name: true } } },
  });
  const items = rows.slice(0, options.take).map((t) => ({
    id: t.id,
    repository: t.repository.name,
    issueNumber: t.issueNumber,
    issueTitle: t.issueTitle,
    state: t.state,
    createdAt: t.createdAt,
    errorSummary: t.errorSummary,
  }));
  return { items, nextBefore: rows.length > options.take ? items.at(-1)!.createdAt : null };
}
