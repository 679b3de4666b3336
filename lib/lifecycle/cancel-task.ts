/**
 * An operator cancel: fail closed (the task becomes `failed`, reason "cancelled by …"), revoke the
 * relay capability and destroy the task's guests. A running step notices at its next transition.
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import { actorIdOf, type Actor } from "../contract/actor";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { failTask } from "./fail-task";
import { canTransitionTask } from "../tasks/task-states";
import type { TaskRunContext } from "../tasks/task-run-context";

export const ZCancelTaskSchema = z.object({ taskId: z.uuid() }).strict();

/** `actor` null = the system (the CLI without a signed-in user). */
export type TCancelTaskInput = z.input<typeof ZCancelTaskSchema> & { actor: Actor | null };

export async function cancelTask(
  deps: Pick<TaskRunContext, "db" | "env" | "substrate">,
  { actor, ...fields }: TCancelTaskInput,
): Promise<void> {
  const input = parseOrThrow(ZCancelTaskSchema, fields, { code: "VALIDATION_FAILED", label: "task cancel" });
  const task = await deps.db.task.findUnique({ where: { id: input.taskId } });
  if (!task) throw new AppError("NOT_FOUND", "No such task.");
  if (!canTransitionTask(task.state, "failed"))
    throw new AppError("STATE_CONFLICT", `A task in state ${task.state} cannot be cancelled.`);
  await recordAudit(deps.db, {
    actorId: actorIdOf(actor),
    action: "task.cancel",
    targetType: "task",
    targetId: task.id,
    detail: { from: task.state },
  });
  await failTask(deps, {
    taskId: task.id,
    error: new AppError("TASK_CANCELLED", `Cancelled by ${actor?.email ?? "the system (the CLI)"}.`),
  });
}
