/**
 * Event-driven dispatch (issue 16, item 2): whoever makes a task ready for the worker (created,
 * retried, a new round) calls notifyTaskReady inside the transaction that made it so. PostgreSQL
 * delivers the notification only if that transaction commits, so a worker never hears of a task
 * that does not exist; the worker LISTENs (lib/jobs/listen-task-ready.ts) and enqueues the task's
 * job at once. A notification lost to a restart or a dropped connection is recovered by the
 * worker's sweep, which stays only for that.
 */
import type { Db, DbTx } from "../db/client";

/** The PostgreSQL notification channel; the payload is the task id. */
export const TASK_READY_CHANNEL = "school_core_task_ready";

export async function notifyTaskReady(tx: Db | DbTx, taskId: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_notify(${TASK_READY_CHANNEL}, ${taskId})`;
}
