/**
 * `npm run worker`: the job worker, on the same database as the web app.
 */
import { getEnv } from "../lib/env";
import { openDatabase } from "../lib/db/open-database";
import { startWorker } from "../lib/jobs/start-worker";
import { logError, logInfo } from "../lib/log";

async function main() {
  const env = getEnv();
  const database = await openDatabase(env, { migrate: true, log: (line) => logInfo(line) });
  const worker = await startWorker({ db: database.db, databaseUrl: database.handle.url });
  let isStopping = false;
  const shutdown = async (signal: string) => {
    if (isStopping) return;
    isStopping = true;
    logInfo("worker shutting down", { signal });
    try {
      await worker.stop();
      await database.close();
    } catch (error) {
      logError("worker shutdown failed", error);
      process.exitCode = 1;
    }
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

main().catch((error) => {
  logError("worker failed to start", error);
  process.exit(1);
});
