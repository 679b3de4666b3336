/**
 * Health of the pieces an operator depends on: the database and the worker's heartbeat, and how
 * often `npm start`'s supervisor had to restart the worker and the web app (a count that keeps
 * rising is a crash loop an operator must look at, even while everything answers).
 */
import { getDb } from "../db/client";
import { getEnv } from "../env";
import { APP_VERSION } from "../version";

export const HEARTBEAT_STALE_AFTER_MS = 30_000;

export type THealth = {
  status: "ok" | "degraded" | "down";
  version: string;
  database: { status: "ok" | "down"; latencyMs?: number; error?: string };
  worker: {
    status: "ok" | "stale" | "never_seen" | "unknown";
    lastHeartbeatAt: string | null;
    workerCount: number;
    restartCount: number;
  };
  web: { restartCount: number };
};

export async function readHealth(now = new Date()): Promise<THealth> {
  const started = performance.now();
  try {
    const db = await getDb();
    await db.$queryRaw`select 1`;
    const latencyMs = Math.round(performance.now() - started);
    const heartbeats = await db.workerHeartbeat.findMany({ orderBy: { beatAt: "desc" } });
    const latest = heartbeats[0];
    const beats = heartbeats.filter((h) => h.beatAt.getTime() > now.getTime() - HEARTBEAT_STALE_AFTER_MS);
    const workerStatus = !latest ? "never_seen" : beats.length > 0 ? "ok" : "stale";
    return {
      status: workerStatus === "ok" ? "ok" : "degraded",
      version: APP_VERSION,
      database: { status: "ok", latencyMs },
      worker: {
        status: workerStatus,
        lastHeartbeatAt: latest?.beatAt.toISOString() ?? null,
        workerCount: beats.length,
        restartCount: latest?.restartCount ?? 0,
      },
      web: { restartCount: getEnv().SCHOOLCORE_RESTART_COUNT },
    };
  } catch {
    // Fail closed: an unreachable database is "down", never "ok"; the detail stays in server logs.
    return {
      status: "down",
      version: APP_VERSION,
      database: { status: "down", error: "The database cannot be reached." },
      worker: { status: "unknown", lastHeartbeatAt: null, workerCount: 0, restartCount: 0 },
      web: { restartCount: getEnv().SCHOOLCORE_RESTART_COUNT },
    };
  }
}
