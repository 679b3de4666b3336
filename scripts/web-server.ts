/**
 * The web app's HTTP server: Next's programmatic API (`next({ dev: false })` +
 * `getRequestHandler()`) behind a plain node:http server, instead of `next start`, so the socket
 * address reaches the app: X-Forwarded-For is overwritten with it unless the peer is a trusted
 * proxy (lib/auth/client-address.ts), and sign-in throttling counts the real peer (issue 12,
 * item 5). `npm start` runs it as a supervised child; it needs a built app (`next build`).
 * `npm run dev` runs the same server in development mode (`--dev`: compiled on demand, hot reload),
 * so the socket address reaches the app there too. A signal stops it in bounded time (issue 27,
 * item 7): requests in flight get a short grace, then every connection is cut.
 */
import http from "node:http";
import next from "next";
import { applyPeerAddress, parseTrustedProxies } from "../lib/auth/client-address";
import { PROJECT_ROOT } from "../lib/project-root";
import { withinDeadline } from "../lib/system/within-deadline";
import { stopProcessLauncher } from "../lib/system/process-launcher";

/** Requests in flight may finish within this; then their connections are closed. */
const REQUEST_GRACE_MS = 3_000;
/** Below the launcher's grace before SIGKILL (lib/system/supervise-children.ts). */
const STOP_DEADLINE_MS = 7_000;

// Read by lib/env.ts in this process only: the app may believe the last X-Forwarded-For hop.
process.env.SCHOOLCORE_WEB_SERVER = "custom";
const { getEnv } = await import("../lib/env");
const { logError, logInfo } = await import("../lib/log");

async function main() {
  const env = getEnv();
  const trustedProxies = parseTrustedProxies(env.TRUSTED_PROXIES);
  const app = next({ dev: process.argv.includes("--dev"), dir: PROJECT_ROOT, hostname: env.HOSTNAME, port: env.PORT });
  const handle = app.getRequestHandler();
  await app.prepare();
  const server = http.createServer((req, res) => {
    applyPeerAddress(req, trustedProxies);
    handle(req, res).catch((error: unknown) => {
      logError("web request failed", error);
      if (!res.headersSent) res.writeHead(500).end();
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(env.PORT, env.HOSTNAME, () => resolve());
  });
  logInfo("web app listening", { host: env.HOSTNAME, port: env.PORT });
  let isStopping = false;
  const shutdown = (signal: string) => {
    if (isStopping) return;
    isStopping = true;
    logInfo("web app shutting down", { signal });
    setTimeout(() => {
      logError("web app stop timed out; exiting", undefined, { afterMs: STOP_DEADLINE_MS });
      process.exit(1);
    }, STOP_DEADLINE_MS).unref();
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeIdleConnections();
    const cut = setTimeout(() => server.closeAllConnections(), REQUEST_GRACE_MS);
    void closed
      .then(() => {
        clearTimeout(cut);
        return withinDeadline(Promise.all([app.close(), stopProcessLauncher()]), 2_000);
      })
      .finally(() => process.exit(0));
  };
  process.on("SIGINT", () => shutdown("SIGINT"));
  process.on("SIGTERM", () => shutdown("SIGTERM"));
}

main().catch((error) => {
  logError("web app failed to start", error);
  process.exit(1);
});
