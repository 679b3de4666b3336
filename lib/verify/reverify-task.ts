/**
 * An operator re-runs the trusted checks (after a manifest change, or to double-check): the task
 * goes back to `imported`, and a worker — told in the same transaction — starts the checks on a
 * fresh verifier guest as soon as a machine is free (at the machine cap it waits there, ahead of
 * new tasks: lib/machines/machine-slots.ts). The old evidence stays (immutable) but no review page
 * built on it can decide any more. Its own permission (`task.reverify`): it invalidates a
 * teacher's open review, which is not what editing the manifest is about.
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import { can, type Actor } from "../auth/permissions";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { notifyWorkReady } from "../db/work-ready";
import { parseOrThrow } from "../parse-or-throw";
import { transitionTaskIn } from "../tasks/transition-task";

export const ZReverifyTaskSchema = z.object({ taskId: z.uuid() }).strict();

export async function reverifyTask(deps: { db: Db }, { actor, ...fields }: z.input<typeof ZReverifyTaskSchema> & { actor: Actor }) {
  // Not allowed to re-verify = not allowed to know the task is there.
  if (!can(actor, "task.reverify")) throw new AppError("NOT_FOUND", "No such task.");
  const input = parseOrThrow(ZReverifyTaskSchema, fields, { code: "VALIDATION_FAILED", label: "re-verification" });
  return deps.db.$transaction(async (tx) => {
    const task = await tx.task.findUnique({ where: { id: input.taskId } });
    if (!task) throw new AppError("NOT_FOUND", "No such task.");
    if (task.state !== "review_pending")
      throw new AppError("STATE_CONFLICT", `Only a task waiting for review can be re-verified (this one is ${task.state}).`);
    await transitionTaskIn(tx, {
      taskId: task.id,
      from: "review_pending",
      to: "imported",
      reason: "re-verification requested by an operator",
    });
    await recordAudit(tx, { actorId: actor.userId, action: "task.reverify", targetType: "task", targetId: task.id });
    await notifyWorkReady(tx, { kind: "task", id: task.id });
  });
}
