/**
 * One task transition = one transaction: compare-and-set on the expected state, and the
 * transition-log row (the shared kernel: lib/db/compare-and-set.ts). Zero rows updated means
 * someone else moved the task: STATE_CONFLICT. What is task-specific lives here: a failure
 * records its reason and error code on the task, and a new operation id or attempt may start.
 * A transition people asked to hear about (issue 30) also writes its notification outbox rows
 * here, in the same transaction; they are sent later by the worker and never block the move.
 */
import { compareAndSetState } from "../db/compare-and-set";
import type { Db, DbTx } from "../db/client";
import type { TaskState } from "../db/generated/enums";
import { enqueueTaskNotificationsIn } from "../notifications/enqueue-notifications";
import { canTransitionTask } from "./task-states";

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
  const isFailure = to === "blocked" || to === "failed" || to === "pr_failed";
  let occurredAt = new Date();
  const task = await compareAndSetState({
    entity: "task",
    table: tx.task,
    id: taskId,
    from,
    to,
    canTransition: canTransitionTask,
    reason: options.reason,
    data: (reason) => ({
      ...(options.operationId ? { operationId: options.operationId } : {}),
      ...(options.incrementAttempt ? { attempt: { increment: 1 } } : {}),
      ...(isFailure
        ? { errorSummary: reason ?? `${to} without a recorded reason`, errorCode: options.errorCode ?? "UNSPECIFIED" }
        : {}),
    }),
    writeLog: async (entry) => {
      const logged = await tx.taskTransition.create({ data: { taskId, ...entry }, select: { createdAt: true } });
      occurredAt = logged.createdAt;
    },
  });
  await enqueueTaskNotificationsIn(tx, { task, from, to, occurredAt });
  return task;
}

export async function transitionTask(db: Db, options: TransitionTaskOptions) {
  return db.$transaction((tx) => transitionTaskIn(tx, options));
}
