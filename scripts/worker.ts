/**
 * `npm run worker`: the job worker, on the same database as the web app. A signal stops it in
 * bounded time (issue 27, item 7): in-flight jobs get a few seconds, then the process exits
 * whatever still holds its event loop — every state change is durable, so a restart resumes the
 * work.
 */
import { getEnv } from "../lib/env";
import { openDatabase } from "../lib/db/open-database";
import { startWorker } from "../lib/jobs/start-worker";
import { logError, logInfo } from "../lib/log";
import { withinDeadline } from "../lib/system/within-deadline";

/** Below the launcher's grace before SIGKILL (lib/system/supervise-children.ts), so a stop is ours, not a kill. */
const STOP_DEADLINE_MS = 6_000;

async function main() {
  const env = getEnv();
  const database = await openDatabase(env, { migrate: true, log: (line) => logInfo(line) });
  const worker = await startWorker({ db: database.db, databaseUrl: database.handle.url });
  let isStopping = false;
  const shutdown = async (signal: string) => {
    if (isStopping) return;
    isStopping = true;
    logInfo("worker shutting down", { signal });
    let exitCode = 0;
    try {
      if ((await withinDeadline(worker.stop(), STOP_DEADLINE_MS)) === "timed-out") {
        logError(
          "worker stop timed out; exiting with jobs still in flight (they resume at the next start)",
          undefined,
          {
            afterMs: STOP_DEADLINE_MS,
          },
        );
        exitCode = 1;
      }
      await database.close();
    } catch (error) {
      logError("worker shutdown failed", error);
      exitCode = 1;
    }
    // A stopped worker exits even if something (a job's socket, a timer) still holds the event loop.
    process.exit(exitCode);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

main().catch((error) => {
  logError("worker failed to start", error);
  process.exit(1);
});
