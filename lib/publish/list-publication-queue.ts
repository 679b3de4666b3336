/**
 * What the operator's publications page lists: tasks whose publication needs attention
 * (pr_pending and pr_failed), oldest-updated first so the stuck ones are on top.
 */
import type { Db } from "../db/client";
import { safeHttpUrl } from "./get-publication";

export type TPublicationQueueItem = {
  taskId: string;
  taskState: "pr_pending" | "pr_failed";
  repository: string;
  issueNumber: number;
  issueTitle: string;
  reconcileState: string;
  attempts: number;
  reason: string | null;
  number: number | null;
  url: string | null;
  nextAttemptAt: Date | null;
  updatedAt: Date;
};

export async function listPublicationQueue(
  deps: { db: Db },
  input: { take?: number } = {},
): Promise<TPublicationQueueItem[]> {
  const tasks = await deps.db.task.findMany({
    where: { state: { in: ["pr_pending", "pr_failed"] } },
    include: { pullRequest: true, repository: { select: { name: true } } },
    orderBy: { updatedAt: "asc" },
    take: Math.min(input.take ?? 100, 500),
  });
  return tasks.map((task) => ({
    taskId: task.id,
    taskState: task.state as "pr_pending" | "pr_failed",
    repository: task.repository.name,
    issueNumber: task.issueNumber,
    issueTitle: task.issueTitle,
    reconcileState: task.pullRequest?.reconcileState ?? "not_started",
    attempts: task.pullRequest?.attempts ?? 0,
    reason: task.pullRequest?.lastError ?? task.errorSummary,
    number: task.pullRequest?.number ?? null,
    url: safeHttpUrl(task.pullRequest?.url ?? null),
    nextAttemptAt: task.pullRequest?.nextAttemptAt ?? null,
    updatedAt: task.pullRequest?.updatedAt ?? task.updatedAt,
  }));
}
