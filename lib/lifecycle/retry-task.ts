/**
 * Retry = a new *attempt* of the same task (issue 13): a new operation id and attempt number, so
 * the next provisioning makes a fresh guest and issues a fresh relay capability (both are keyed
 * by the operation), while every earlier attempt's transitions, machines and evidence stay as
 * they were. An attempt is an infrastructure retry inside one review round, not a new round.
 *
 * Where the new attempt starts: `queued` (the student run again) unless the failed attempt had
 * already imported a candidate nobody has decided on — then `imported`, so the trusted checks
 * run again on a fresh verifier guest and the immutable candidate is not made twice. A task whose
 * candidate was approved failed during publication: that is retried from the publications page.
 *
 * Neither is refused at the machine cap: a retry to `queued` waits for admission, one to `imported`
 * waits there for a free machine, ahead of new tasks (lib/machines/machine-slots.ts).
 *
 * Automatic retries (transient provider errors only, planned by failTask with a backoff) come
 * through here too, as actor null; integrity failures (`failed`) are never retried automatically.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { actorIdOf, type Actor } from "../contract/actor";
import { ZAuditReasonSchema } from "../contract/audit-reason";
import { recordAudit } from "../audit";
import type { Db } from "../db/client";
import type { TaskState } from "../db/generated/enums";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { notifyWorkReady } from "../db/work-ready";
import { RETRYABLE_TASK_STATES } from "../tasks/task-states";
import { transitionTaskIn } from "../tasks/transition-task";

export const ZRetryTaskSchema = z
  .object({
    taskId: z.uuid(),
    reason: ZAuditReasonSchema,
  })
  .strict();
export type TRetryTaskInput = z.input<typeof ZRetryTaskSchema>;

export type TRetryOutcome = {
  taskId: string;
  attempt: number;
  operationId: string;
  from: TaskState;
  to: "queued" | "imported";
};

export async function retryTask(
  deps: { db: Db; now?: () => Date },
  input: TRetryTaskInput & { actor: Actor | null; isAutomatic?: boolean },
): Promise<TRetryOutcome> {
  const { taskId, reason } = parseOrThrow(
    ZRetryTaskSchema,
    { taskId: input.taskId, reason: input.reason },
    { code: "VALIDATION_FAILED", label: "retry" },
  );
  const now = (deps.now ?? (() => new Date()))();
  return deps.db.$transaction(async (tx) => {
    const task = await tx.task.findUnique({
      where: { id: taskId },
      include: { candidates: { select: { id: true, decisions: { select: { verdict: true } } } } },
    });
    if (!task || task.probeRunId) throw new AppError("NOT_FOUND", "No such task.");
    if (!(RETRYABLE_TASK_STATES as readonly string[]).includes(task.state))
      throw new AppError("STATE_CONFLICT", `Only a blocked or failed task can be retried (this one is ${task.state}).`);
    if (input.isAutomatic && (task.state !== "blocked" || !task.autoRetryAt || task.autoRetryAt > now)) {
      throw new AppError("STATE_CONFLICT", "No automatic retry is due for this task.");
    }
    if (task.candidates.some((c) => c.decisions.some((d) => d.verdict === "approve"))) {
      throw new AppError(
        "STATE_CONFLICT",
        "This task's candidate was approved: retry its publication from the Publications page.",
      );
    }
    const hasOpenCandidate = task.candidates.some((c) => c.decisions.length === 0);
    const to = hasOpenCandidate ? "imported" : "queued";
    const operationId = randomUUID();
    const attempt = task.attempt + 1;
    const who = input.isAutomatic ? "automatic retry of a transient provider error" : "retried by an operator";
    await transitionTaskIn(tx, {
      taskId,
      from: task.state,
      to,
      operationId,
      incrementAttempt: true,
      reason: `attempt ${attempt}: ${who} — ${reason}`,
    });
    // The new attempt starts clean: its own deadline, no error, no retry planned.
    await tx.task.update({
      where: { id: taskId },
      data: {
        errorCode: null,
        errorSummary: null,
        deadlineAt: null,
        autoRetryAt: null,
        ...(input.isAutomatic ? { autoRetryCount: { increment: 1 } } : {}),
      },
    });
    await recordAudit(tx, {
      actorId: actorIdOf(input.actor),
      action: "task.retry",
      targetType: "task",
      targetId: taskId,
      detail: {
        from: task.state,
        to,
        attempt,
        operationId,
        previousOperationId: task.operationId,
        previousErrorCode: task.errorCode,
        isAutomatic: input.isAutomatic ?? false,
        reason,
      },
    });
    // Dispatch at once: delivered only if this transaction commits (the sweep stays the fallback).
    await notifyWorkReady(tx, { kind: "task", id: taskId });
    return { taskId, attempt, operationId, from: task.state, to };
  });
}

/** Blocked tasks whose automatic retry is due (the worker's sweep retries them). */
export async function listDueAutomaticRetries(deps: { db: Db }, input: { now: Date; take: number }): Promise<string[]> {
  const rows = await deps.db.task.findMany({
    where: { state: "blocked", autoRetryAt: { lte: input.now } },
    select: { id: true },
    orderBy: { autoRetryAt: "asc" },
    take: input.take,
  });
  return rows.map((r) => r.id);
}
