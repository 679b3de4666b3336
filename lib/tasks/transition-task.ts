/**
 * One task transition = one transaction: compare-and-set on the expected state, and the
 * transition-log row. Zero rows updated means someone else moved the task: STATE_CONFLICT.
 * A transition people asked to hear about (issue 30) also writes its notification outbox rows
 * here, in the same transaction; they are sent later by the worker and never block the move.
 */
import type { Db, DbTx } from "../db/client";
import type { TaskState } from "../db/generated/enums";
import { AppError } from "../errors";
import { enqueueTaskNotificationsIn } from "../notifications/enqueue-notifications";
import { sanitizeExcerpt } from "../redact";
import { canTransitionTask } from "./task-states";

export const MAX_REASON_BYTES = 2048;

export type TransitionTaskOptions = {
  taskId: string;
  from: TaskState;
  to: TaskState;
  /** bounded and redacted before it is stored */
  reason?: string;
  errorCode?: string;
  /** a new operation id starts a new lifecycle operation (e.g. a retry) */
  operationId?: string;
  incrementAttempt?: boolean;
};

export async function transitionTaskIn(tx: DbTx, options: TransitionTaskOptions) {
  const { taskId, from, to } = options;
  if (!canTransitionTask(from, to)) throw new AppError("STATE_CONFLICT", `Illegal task transition ${from} → ${to}.`);
  const reason = options.reason === undefined ? undefined : sanitizeExcerpt(options.reason, MAX_REASON_BYTES);
  const isFailure = to === "blocked" || to === "failed" || to === "pr_failed";
  const updated = await tx.task.updateMany({
    where: { id: taskId, state: from },
    data: {
      state: to,
      ...(options.operationId ? { operationId: options.operationId } : {}),
      ...(options.incrementAttempt ? { attempt: { increment: 1 } } : {}),
      ...(isFailure ? { errorSummary: reason ?? `${to} without a recorded reason`, errorCode: options.errorCode ?? "UNSPECIFIED" } : {}),
    },
  });
  if (updated.count !== 1) {
    const current = await tx.task.findUnique({ where: { id: taskId }, select: { state: true } });
    throw new AppError("STATE_CONFLICT", current ? `Task ${taskId} is ${current.state}, not ${from}.` : `Task ${taskId} does not exist.`, {
      current: current?.state,
    });
  }
  const task = await tx.task.findUniqueOrThrow({ where: { id: taskId } });
  const logged = await tx.taskTransition.create({
    data: { taskId, fromState: from, toState: to, operationId: task.operationId, attempt: task.attempt, reason },
    select: { createdAt: true },
  });
  await enqueueTaskNotificationsIn(tx, { task, from, to, occurredAt: logged.createdAt });
  return task;
}

export async function transitionTask(db: Db, options: TransitionTaskOptions) {
  return db.$transaction((tx) => transitionTaskIn(tx, options));
}
