/**
 * An operator cancel: fail closed (the task becomes `failed`, reason "cancelled by …"), revoke the
 * relay capability and destroy the task's guests. A running step notices at its next transition.
 */
import { recordAudit } from "../audit";
import { AppError } from "../errors";
import { failTask } from "./fail-task";
import { canTransitionTask } from "../tasks/task-states";
import type { TaskRunContext } from "../tasks/task-run-context";

export async function cancelTask(ctx: TaskRunContext, options: { taskId: string; actorId: string | null; actorEmail?: string }): Promise<void> {
  const task = await ctx.db.task.findUnique({ where: { id: options.taskId } });
  if (!task) throw new AppError("NOT_FOUND", "No such task.");
  if (!canTransitionTask(task.state, "failed")) throw new AppError("STATE_CONFLICT", `A task in state ${task.state} cannot be cancelled.`);
  await recordAudit(ctx.db, { actorId: options.actorId, action: "task.cancel", targetType: "task", targetId: task.id, detail: { from: task.state } });
  await failTask(ctx, task.id, new AppError("TASK_CANCELLED", `Cancelled by ${options.actorEmail ?? "an operator"}.`));
}
