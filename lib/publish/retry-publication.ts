/**
 * An operator retries a publication: from pr_failed (after fixing the token, deleting a stray
 * branch …) or from a pr_pending that is stuck in backoff or behind a crashed worker's lease.
 * Nothing is created here: the next publishApprovedTask call reconciles first, so a retry can
 * never duplicate a pull request. Audit-logged with the operator and the reason.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import type { Actor } from "../contract/actor";
import { ZOptionalAuditReasonSchema } from "../contract/audit-reason";
import { recordAudit } from "../audit";
import { can } from "../auth/permissions";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { transitionTaskIn } from "../tasks/transition-task";
import { sanitizeExcerpt } from "../redact";

export const ZRetryPublicationSchema = z.object({ taskId: z.uuid(), reason: ZOptionalAuditReasonSchema }).strict();

export type TRetryPublicationInput = z.input<typeof ZRetryPublicationSchema> & { actor: Actor };

export async function retryPublication(
  deps: { db: Db },
  { actor, ...fields }: TRetryPublicationInput,
): Promise<{ taskId: string; from: "pr_failed" | "pr_pending" }> {
  const { db } = deps;
  // Not allowed to manage publications = not allowed to know the task is there.
  if (!can(actor, "publish.manage")) throw new AppError("NOT_FOUND", "Not found.");
  const input = parseOrThrow(ZRetryPublicationSchema, fields, {
    code: "VALIDATION_FAILED",
    label: "publication retry",
  });
  const reason = input.reason ? sanitizeExcerpt(input.reason, 500) : undefined;
  return db.$transaction(async (tx) => {
    const task = await tx.task.findUnique({ where: { id: input.taskId }, include: { pullRequest: true } });
    if (!task || !task.pullRequest) throw new AppError("NOT_FOUND", `No publication exists for task ${input.taskId}.`);
    const pull = task.pullRequest;
    if (task.state === "pr_failed") {
      await transitionTaskIn(tx, {
        taskId: task.id,
        from: "pr_failed",
        to: "pr_pending",
        operationId: randomUUID(),
        incrementAttempt: true,
        reason: `operator retry${reason ? `: ${reason}` : ""}`,
      });
      const updated = await tx.pullRequest.updateMany({
        where: { id: pull.id, state: "failed" },
        // A terminal marker would mislead the next attempt's reader; the provider is read again anyway.
        data: {
          state: "pending",
          nextAttemptAt: null,
          ...(pull.reconcileState === "conflict" || pull.reconcileState === "failed"
            ? { reconcileState: "not_pushed" }
            : {}),
        },
      });
      if (updated.count !== 1)
        throw new AppError("STATE_CONFLICT", "The publication changed meanwhile; reload and try again.");
    } else if (task.state === "pr_pending") {
      // Clearing nextAttemptAt ends the backoff (or a dead worker's lease). A still-running
      // attempt is fenced out by the next claim's attempt number.
      const updated = await tx.pullRequest.updateMany({
        where: { id: pull.id, state: "pending" },
        data: { nextAttemptAt: null },
      });
      if (updated.count !== 1)
        throw new AppError("STATE_CONFLICT", "The publication changed meanwhile; reload and try again.");
    } else {
      throw new AppError(
        "STATE_CONFLICT",
        `Task ${task.id} is ${task.state}; only pr_failed or pr_pending publications can be retried.`,
      );
    }
    const from = task.state;
    await recordAudit(tx, {
      actorId: actor.userId,
      action: "publication.retry",
      targetType: "task",
      targetId: task.id,
      detail: { from, reason: reason ?? null, attempts: pull.attempts },
    });
    return { taskId: task.id, from };
  });
}
