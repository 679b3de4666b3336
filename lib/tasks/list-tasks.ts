/**
 * Task lists for the operator: newest first, optionally filtered by state, keyset-paged.
 */
import type { Db } from "../db/client";
import type { TaskState } from "../db/generated/enums";

export type TTaskListItem = {
  id: string;
  repository: string;
  issueNumber: number;
  issueTitle: string;
  state: TaskState;
  createdAt: Date;
  errorSummary: string | null;
};

export async function listRecentTasks(
  deps: { db: Db },
  input: { take: number; state?: TaskState; before?: Date },
): Promise<{ items: TTaskListItem[]; nextBefore: Date | null }> {
  const rows = await deps.db.task.findMany({
    // a qualification probe's own tasks are shown on the probes page, not among the school's tasks
    where: {
      probeRunId: null,
      ...(input.state ? { state: input.state } : {}),
      ...(input.before ? { createdAt: { lt: input.before } } : {}),
    },
    orderBy: { createdAt: "desc" },
    take: input.take + 1,
    include: { repository: { select: { name: true } } },
  });
  const items = rows.slice(0, input.take).map((t) => ({
    id: t.id,
    repository: t.repository.name,
    issueNumber: t.issueNumber,
    issueTitle: t.issueTitle,
    state: t.state,
    createdAt: t.createdAt,
    errorSummary: t.errorSummary,
  }));
  return { items, nextBefore: rows.length > input.take ? items.at(-1)!.createdAt : null };
}
