/**
 * The worker: registers every job handler on pg-boss and keeps the heartbeat going.
 * Returns a stop function that finishes in-flight jobs (graceful) and closes the queue.
 */
import { hostname } from "node:os";
import type { PgBoss } from "pg-boss";
import type { Db } from "../db/client";
import { logError, logInfo } from "../log";
import { createBoss } from "./boss";
import { HEARTBEAT_INTERVAL_MS, recordHeartbeat } from "./heartbeat";
import { JOBS } from "./job-names";

export type WorkerHandle = { workerId: string; boss: PgBoss; stop(): Promise<void> };

export async function startWorker(options: { db: Db; databaseUrl: string }): Promise<WorkerHandle> {
  const { db } = options;
  const workerId = `${hostname()}:${process.pid}`;
  const startedAt = new Date();
  const boss = createBoss(options.databaseUrl);
  boss.on("error", (error) => logError("pg-boss error", error));
  await boss.start();

  await boss.createQueue(JOBS.heartbeat.name, { retryLimit: 0, expireInSeconds: 30, deleteAfterSeconds: 300 });
  await boss.work(JOBS.heartbeat.name, { pollingIntervalSeconds: 1 }, async (jobs) => {
    for (const job of jobs) {
      JOBS.heartbeat.schema.parse(job.data);
      await recordHeartbeat(db, workerId, startedAt);
    }
  });

  const sendHeartbeat = () =>
    boss.send(JOBS.heartbeat.name, { sentAt: new Date().toISOString() }, { singletonKey: workerId, singletonSeconds: 5 }).catch((error) => logError("heartbeat send failed", error));
  await sendHeartbeat();
  const timer = setInterval(sendHeartbeat, HEARTBEAT_INTERVAL_MS);
  logInfo("worker started", { workerId });

  let stopping: Promise<void> | undefined;
  return {
    workerId,
    boss,
    stop: () =>
      (stopping ??= (async () => {
        clearInterval(timer);
        await boss.stop({ graceful: true, timeout: 20_000, close: true });
        logInfo("worker stopped", { workerId });
      })()),
  };
}
