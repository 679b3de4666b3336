/**
 * The worker's heartbeat: sent through the queue and recorded by the job, so a fresh heartbeat
 * proves the queue itself is being served, not only that a process is alive.
 */
import type { Db } from "../db/client";
import { APP_VERSION } from "../version";

export const HEARTBEAT_INTERVAL_MS = 10_000;

/** restartCount: how many times `npm start`'s supervisor had restarted the worker (health panel, metrics). */
export async function recordHeartbeat(
  db: Db,
  workerId: string,
  startedAt: Date,
  now = new Date(),
  restartCount = 0,
): Promise<void> {
  await db.workerHeartbeat.upsert({
    where: { workerId },
    create: { workerId, version: APP_VERSION, beatAt: now, startedAt, restartCount },
    update: { beatAt: now, version: APP_VERSION },
  });
}
