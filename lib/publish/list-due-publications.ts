/**
 * Task ids whose publication should be attempted now: approved tasks not yet started, and
 * pending publications whose backoff or lease has run out. The worker's reconciliation sweep
 * calls publishApprovedTask for each; a task that is not due is simply not listed.
 */
import type { Db } from "../db/client";

export async function listDuePublications(
  deps: { db: Db; now?: () => Date },
  input: { take?: number } = {},
): Promise<string[]> {
  const now = deps.now?.() ?? new Date();
  const take = Math.min(input.take ?? 50, 500);
  const [pending, approved] = await Promise.all([
    deps.db.pullRequest.findMany({
      where: { state: "pending", OR: [{ nextAttemptAt: null }, { nextAttemptAt: { lte: now } }] },
      orderBy: { updatedAt: "asc" },
      take,
      select: { taskId: true },
    }),
    deps.db.task.findMany({ where: { state: "approved" }, orderBy: { updatedAt: "asc" }, take, select: { id: true } }),
  ]);
  return [...pending.map((p) => p.taskId), ...approved.map((t) => t.id)].slice(0, take);
}
