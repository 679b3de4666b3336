/**
 * An operator re-runs the trusted checks (after a manifest change, or to double-check): the task
 * goes back to `verifying`; the old evidence stays (immutable) but no review page built on it can
 * decide any more.
 */
import { recordAudit } from "../audit";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { transitionTaskIn } from "../tasks/transition-task";

export async function reverifyTask(options: { db: Db; taskId: string; actorId: string }) {
  return options.db.$transaction(async (tx) => {
    const task = await tx.task.findUnique({ where: { id: options.taskId } });
    if (!task) throw new AppError("NOT_FOUND", "No such task.");
    if (task.state !== "review_pending") throw new AppError("STATE_CONFLICT", `Only a task waiting for review can be re-verified (this one is ${task.state}).`);
    await transitionTaskIn(tx, { taskId: task.id, from: "review_pending", to: "verifying", reason: "re-verification requested by an operator" });
    await recordAudit(tx, { actorId: options.actorId, action: "task.reverify", targetType: "task", targetId: task.id });
  });
}
