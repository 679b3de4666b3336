/**
 * approved → pr_pending → pr_open | pr_failed: the publication module does the work (reconcile
 * first, never duplicate); this step only gives it a provider and lets it run.
 */
import type { Task } from "../db/generated/client";
import { loadPublicationProvider } from "./load-publication-provider";
import { publishApprovedTask } from "./publish-approved-task";
import { releaseAbandonedLease } from "./publication.repo";
import type { TaskRunContext } from "../tasks/task-run-context";

export async function publishStep(ctx: TaskRunContext, task: Task): Promise<void> {
  // The worker runs every step under the task's advisory lock, so a lease still held here was
  // left by a worker that died mid-attempt.
  await releaseAbandonedLease(ctx.db, task.id);
  const provider = await loadPublicationProvider({ db: ctx.db, dataDir: ctx.env.dataDir });
  try {
    await publishApprovedTask({ db: ctx.db, provider, dataDir: ctx.env.dataDir }, { taskId: task.id });
  } finally {
    await provider.close();
  }
}
