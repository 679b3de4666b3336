/**
 * An operator ends a pending publication with a reason (the target repository is gone, the
 * teacher withdrew, the provider will never answer). The task moves pr_pending → pr_failed in the
 * same transaction as the PullRequest row and the audit entry.
 *
 * An attempt still in flight cannot undo this: its writes are conditioned on the row being
 * pending. If that attempt's create reached the provider anyway, a later retry reconciles and
 * adopts that pull request instead of opening another.
 */
import { z } from "zod";
import type { Actor } from "../contract/actor";
import { ZAuditReasonSchema } from "../contract/audit-reason";
import { recordAudit } from "../audit";
import { can } from "../auth/permissions";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { transitionTaskIn } from "../tasks/transition-task";
import { boundLastError } from "./publication.repo";

export const ZMarkPublicationFailedSchema = z.object({ taskId: z.uuid(), reason: ZAuditReasonSchema }).strict();

export type TMarkPublicationFailedInput = z.input<typeof ZMarkPublicationFailedSchema> & { actor: Actor };

export async function markPublicationFailed(
  deps: { db: Db },
  { actor, ...fields }: TMarkPublicationFailedInput,
): Promise<{ taskId: string }> {
  const { db } = deps;
  if (!can(actor, "publish.manage")) throw new AppError("NOT_FOUND", "Not found.");
  const input = parseOrThrow(ZMarkPublicationFailedSchema, fields, {
    code: "VALIDATION_FAILED",
    label: "mark publication failed",
  });
  const reason = boundLastError(`Marked failed by an operator: ${input.reason}`);
  return db.$transaction(async (tx) => {
    const pull = await tx.pullRequest.findUnique({ where: { taskId: input.taskId } });
    if (!pull) throw new AppError("NOT_FOUND", `No publication exists for task ${input.taskId}.`);
    const updated = await tx.pullRequest.updateMany({
      where: { id: pull.id, state: "pending" },
      data: { state: "failed", reconcileState: "failed", lastError: reason, nextAttemptAt: null },
    });
    if (updated.count !== 1)
      throw new AppError("STATE_CONFLICT", `The publication of task ${pull.taskId} is ${pull.state}, not pending.`);
    await transitionTaskIn(tx, {
      taskId: pull.taskId,
      from: "pr_pending",
      to: "pr_failed",
      reason,
      errorCode: "PUBLISH_FAILED",
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: "publication.mark_failed",
      targetType: "task",
      targetId: pull.taskId,
      detail: { reason, attempts: pull.attempts, reconcileState: pull.reconcileState },
    });
    return { taskId: pull.taskId };
  });
}
