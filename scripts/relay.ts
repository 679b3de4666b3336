/**
 * `npm run relay`: the relay listener (lib/relay/relay-server.ts) on RELAY_PORT, the one endpoint a
 * guest on the HTTP relay channel reaches. `npm start` runs it as a supervised child; more than
 * one may run against the same database (they share the port). A signal stops it in bounded time:
 * open connections are cut, and the process exits after its steps or their deadline (issue 27,
 * item 7).
 */
import { getEnv, relayListenerUrl } from "../lib/env";
import { openDatabase } from "../lib/db/open-database";
import { logError, logInfo } from "../lib/log";
import { startRelayServer } from "../lib/relay/relay-server";
import { closeUpstreamAgents } from "../lib/relay/transports/http-upstream";
import { withinDeadline } from "../lib/system/within-deadline";

const STEP_DEADLINE_MS = 2_000;

async function main() {
  const env = getEnv();
  // The launcher (or the worker) migrates; a relay process only serves.
  const database = await openDatabase(env, { migrate: false, log: (line) => logInfo(line) });
  const server = await startRelayServer({
    db: database.db,
    host: env.HOSTNAME,
    port: env.RELAY_PORT,
    isPortShared: true,
  });
  logInfo("relay listener started", { url: relayListenerUrl(env) });
  let isStopping = false;
  const shutdown = async (signal: string) => {
    if (isStopping) return;
    isStopping = true;
    logInfo("relay listener shutting down", { signal });
    let exitCode = 0;
    try {
      // server.close() cuts every connection, an upstream call in flight included (lib/relay/relay-server.ts)
      for (const [name, step] of [
        ["listener", () => server.close()],
        ["upstream agents", () => closeUpstreamAgents()],
      ] as const) {
        if ((await withinDeadline(step(), STEP_DEADLINE_MS)) === "timed-out") {
          logError("relay listener shutdown step timed out", undefined, { step: name, afterMs: STEP_DEADLINE_MS });
          exitCode = 1;
        }
      }
      await database.close();
    } catch (error) {
      logError("relay listener shutdown failed", error);
      exitCode = 1;
    }
    process.exit(exitCode);
  };
  process.on("SIGINT", () => void shutdown("SIGINT"));
  process.on("SIGTERM", () => void shutdown("SIGTERM"));
}

main().catch((error) => {
  logError("relay listener failed to start", error);
  process.exit(1);
});
