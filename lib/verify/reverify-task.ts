/**
 * An operator re-runs the trusted checks (after a manifest change, or to double-check): the task
 * goes back to `verifying`; the old evidence stays (immutable) but no review page built on it can
 * decide any more. Its own permission (`task.reverify`): it invalidates a teacher's open review,
 * which is not what editing the manifest is about. The task takes a machine slot again without
 * going through admission, so it needs a free one (lib/machines/machine-slots.ts): when every slot
 * is in use the request is refused and the task stays waiting for review.
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import { can, type Actor } from "../auth/permissions";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { claimFreeMachineSlotIn } from "../machines/machine-slots";
import { parseOrThrow } from "../parse-or-throw";
import { transitionTaskIn } from "../tasks/transition-task";

export const ZReverifyTaskSchema = z.object({ taskId: z.uuid() }).strict();

export async function reverifyTask(
  deps: { db: Db; substrateLabel: string },
  { actor, ...fields }: z.input<typeof ZReverifyTaskSchema> & { actor: Actor },
) {
  // Not allowed to re-verify = not allowed to know the task is there.
  if (!can(actor, "task.reverify")) throw new AppError("NOT_FOUND", "No such task.");
  const input = parseOrThrow(ZReverifyTaskSchema, fields, { code: "VALIDATION_FAILED", label: "re-verification" });
  return deps.db.$transaction(async (tx) => {
    const task = await tx.task.findUnique({ where: { id: input.taskId } });
    if (!task) throw new AppError("NOT_FOUND", "No such task.");
    if (task.state !== "review_pending")
      throw new AppError("STATE_CONFLICT", `Only a task waiting for review can be re-verified (this one is ${task.state}).`);
    await claimFreeMachineSlotIn(tx, deps.substrateLabel, "the re-verification");
    await transitionTaskIn(tx, {
      taskId: task.id,
      from: "review_pending",
      to: "verifying",
      reason: "re-verification requested by an operator",
    });
    await recordAudit(tx, { actorId: actor.userId, action: "task.reverify", targetType: "task", targetId: task.id });
  });
}
