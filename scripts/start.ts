/**
 * `npm start`: the whole system on embedded defaults. Builds the web app if needed, starts (or
 * reuses) embedded PostgreSQL, migrates, seeds demo data once, starts the worker, the web app
 * (scripts/web-server.ts) and the relay listener (scripts/relay.ts), and prints their URLs. The
 * worker and the web app are supervised: a child that dies is restarted with backoff
 * (lib/system/supervise-children.ts).
 *
 * Ctrl-C stops everything, always, in bounded time (issue 27, item 7): a signal is handled from
 * the first line on, so one that arrives during start-up stops what has started so far (it used
 * to kill the launcher and leave the detached PostgreSQL running on its port); children get
 * SIGTERM, then SIGKILL with everything below them; each in-process server and PostgreSQL (fast,
 * then immediate shutdown, then SIGKILL) has a deadline; and a watchdog kills whatever is left
 * when the whole stop overruns.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { resolveSessionSecret } from "../lib/auth/secret";
import { openDatabase } from "../lib/db/open-database";
import { PROJECT_ROOT } from "../lib/project-root";
import { seedDemoEnvironment } from "../lib/demo/seed-demo-environment";
import { GREETER_FIXTURE_PACKAGES } from "../lib/demo/greeter-target";
import { startFixtureRegistry } from "../lib/dependencies/fixture-registry";
import { seedDemoUsers } from "../lib/demo/seed-demo-users";
import { ensureTokenFile } from "../lib/secrets/token-file";
import { defaultForgeTokenFiles } from "../sidecars/local-forge/forge-tokens";
import { startLocalForge } from "../sidecars/local-forge/start-local-forge";
import { ensureDefaultGuestImage } from "../sidecars/local-substrate/default-guest-image";
import { startLocalSubstrate } from "../sidecars/local-substrate/start-local-substrate";
import { createForgeRepository } from "../sidecars/local-forge/create-forge-repository";
import { defaultSubstrateTokenFiles, ensureSubstrateTokenFile } from "../sidecars/local-substrate/substrate-tokens";
import { ensureBubblewrap } from "../lib/system/ensure-bubblewrap";
import { getEnv, relayListenerUrl } from "../lib/env";
import { isAppError } from "../lib/errors";
import { superviseChildren, type SupervisedChild, type Supervisor } from "../lib/system/supervise-children";
import { listDescendants, signalEach } from "../lib/system/process-tree";
import { stopProcessLauncher } from "../lib/system/process-launcher";
import { withinDeadline } from "../lib/system/within-deadline";
import { forceStopEmbeddedPostgres } from "../lib/db/embedded-postgres";
import { hintFrameworkChunks } from "./compile-hints";

const NEXT_BIN = path.join(PROJECT_ROOT, "node_modules", "next", "dist", "bin", "next");
const SOURCE_DIRS = ["app", "components", "lib", "proxy.ts", "next.config.ts", "package.json", "postcss.config.mjs"];

function say(line: string) {
  process.stdout.write(`[school-core] ${line}\n`);
}

function newestMtime(entry: string): number {
  const full = path.join(PROJECT_ROOT, entry);
  if (!fs.existsSync(full)) return 0;
  const stat = fs.statSync(full);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const child of fs.readdirSync(full)) {
    if (child === "node_modules" || child.startsWith(".next")) continue;
    newest = Math.max(newest, newestMtime(path.join(entry, child)));
  }
  return newest;
}

function needsBuild(): boolean {
  const buildId = path.join(PROJECT_ROOT, process.env.NEXT_DIST_DIR || ".next", "BUILD_ID");
  if (!fs.existsSync(buildId)) return true;
  const built = fs.statSync(buildId).mtimeMs;
  return SOURCE_DIRS.some((entry) => newestMtime(entry) > built);
}

/** Ends the stop when a step hangs beyond its own deadlines: every process below the launcher, and PostgreSQL, is killed. */
const STOP_WATCHDOG_MS = 40_000;
/** Each in-process server (substrate, forge, demo registry) closes every connection; the substrate also kills its guests. */
const SERVICE_STOP_TIMEOUT_MS = 8_000;

/** Thrown out of start-up when a stop was asked for meanwhile: what started so far is stopped, nothing more starts. */
class StopRequested extends Error {}

type TOwned = { name: string; stop(): Promise<void> };

/** A supervised child whose SIGKILL also reaches what it spawned: a killed parent would leave those orphaned. */
function asSupervised(child: ChildProcess): SupervisedChild {
  return {
    get pid() {
      return child.pid;
    },
    kill(signal) {
      if (signal === "SIGKILL" && child.pid) signalEach(listDescendants(child.pid), "SIGKILL");
      return child.kill(signal);
    },
    once: (event, listener) => child.once(event, listener),
  };
}

/** The first start must answer: a web app that cannot even come up once is a failed start, not a restart loop. */
async function waitForHealth(
  url: string,
  currentWeb: () => ChildProcess | undefined,
  timeoutMs: number,
  checkpoint: () => void,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    checkpoint();
    const child = currentWeb();
    if (child && (child.exitCode !== null || child.signalCode !== null))
      throw new Error("the web app exited during start-up");
    try {
      const response = await fetch(`${url}/api/health`, { signal: AbortSignal.timeout(5_000) });
      if (response.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`the web app did not answer on ${url} within ${timeoutMs / 1000}s`);
}

async function main() {
  const env = getEnv();
  const displayHost = env.HOSTNAME === "0.0.0.0" ? "localhost" : env.HOSTNAME;
  const url = `http://${displayHost}:${env.PORT}`;
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: env.dataDir,
    NODE_ENV: "production",
    NEXTAUTH_URL: env.NEXTAUTH_URL ?? url,
    NEXTAUTH_SECRET: resolveSessionSecret(env),
  };

  // What has started, stopped in reverse order; the supervisor's children go first.
  const owned: TOwned[] = [];
  let supervisor: Supervisor | undefined;
  let tool: ChildProcess | undefined; // prisma generate or next build, while it runs
  let stopReason: string | undefined;
  const checkpoint = () => {
    if (stopReason) throw new StopRequested(stopReason);
  };

  let isForcing = false;
  const forceStop = async (why: string) => {
    if (isForcing) return;
    isForcing = true;
    say(`forcing the stop (${why}): killing every process that is left`);
    signalEach(listDescendants(process.pid), "SIGKILL");
    if (!env.DATABASE_URL) await forceStopEmbeddedPostgres(env.dataDir, say).catch(() => undefined);
    process.exit(1);
  };

  let startingUp: Promise<void> = Promise.resolve();
  let isStopping = false;
  const shutdown = async (reason: string, exitCode: number) => {
    if (isStopping) return;
    isStopping = true;
    stopReason = reason;
    say(`stopping (${reason})`);
    setTimeout(() => void forceStop(`not stopped within ${STOP_WATCHDOG_MS / 1000}s`), STOP_WATCHDOG_MS);
    tool?.kill("SIGTERM");
    // The start-up step in progress settles first (it cannot be cut in half safely); then
    // whatever it started is in `owned` and is stopped with the rest.
    await startingUp.catch(() => undefined);
    await supervisor?.stop();
    for (const item of owned.reverse()) {
      const outcome = await withinDeadline(
        item.stop().catch((error: Error) => say(`stopping ${item.name} failed: ${error.message}`)),
        SERVICE_STOP_TIMEOUT_MS,
      );
      if (outcome === "timed-out") say(`stopping ${item.name} took over ${SERVICE_STOP_TIMEOUT_MS / 1000}s; moving on`);
    }
    // This process ran git too (the demo's seeding): its own process launcher stops and is reaped here.
    await stopProcessLauncher();
    // Nothing may outlive the launcher: a guest or a grandchild that escaped its owner's stop goes now.
    const leftovers = listDescendants(process.pid);
    if (leftovers.length > 0) {
      say(`killing ${leftovers.length} process(es) left behind: ${leftovers.join(", ")}`);
      signalEach(leftovers, "SIGKILL");
    }
    say("stopped");
    process.exit(exitCode);
  };
  for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) process.on(signal, () => void shutdown(signal, 0));
  // A closed terminal (SIGHUP) makes every later log line fail; that must not crash the stop half-way.
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => undefined);

  const run = (command: string, args: string[], runEnv: NodeJS.ProcessEnv) =>
    new Promise<void>((resolve, reject) => {
      checkpoint();
      const child = (tool = spawn(command, args, { cwd: PROJECT_ROOT, env: runEnv, stdio: "inherit" }));
      child.on("error", reject);
      child.on("exit", (code) => {
        tool = undefined;
        if (code === 0) resolve();
        else reject(new Error(`${path.basename(args[0] ?? command)} exited with ${code}`));
      });
    });

  let web: ChildProcess | undefined;
  let seed: Awaited<ReturnType<typeof seedDemoUsers>> | undefined;
  const startUp = async () => {
    if (!fs.existsSync(path.join(PROJECT_ROOT, "lib", "db", "generated", "client.ts"))) {
      say("generating the Prisma client");
      await run(process.execPath, [path.join(PROJECT_ROOT, "scripts", "prisma-generate.mjs")], childEnv);
    }
    if (needsBuild()) {
      say("building the web app (first start or sources changed)");
      await run(process.execPath, [NEXT_BIN, "build"], { ...childEnv, NEXT_TELEMETRY_DISABLED: "1" });
      // As `npm run build` does. A build made before the hint existed is older than package.json,
      // so it is rebuilt (and marked) here. Only a first visit's speed depends on the hint: a
      // failure is said and the app starts anyway.
      await hintFrameworkChunks(path.join(PROJECT_ROOT, process.env.NEXT_DIST_DIR || ".next")).catch((error: Error) =>
        say(`marking the framework chunk for eager compilation failed (pages still work): ${error.message}`),
      );
    }

    checkpoint();
    ensureBubblewrap(say);
    // Traverse-only for others, not 0700: the embedded PostgreSQL (as root, user postgres) and the
    // local substrate's sandbox uids enter it by name; what they may not see is 0700 below it.
    await fs.promises.mkdir(env.dataDir, { recursive: true, mode: 0o711 });
    // Adopting: `npm start` owns its DATA_DIR, so it also stops a server a crashed start left running.
    const database = await openDatabase(env, { migrate: true, log: (line) => say(line), isAdopting: true });
    owned.push({ name: "embedded PostgreSQL", stop: database.close });
    childEnv.DATABASE_URL = database.handle.url;
    checkpoint();

    // The local substrate (NOT a VM) unless the operator points us at the hosted SmolCloud.
    if (!env.SMOLCLOUD_URL) {
      const tokens = defaultSubstrateTokenFiles(env.dataDir);
      await ensureDefaultGuestImage(env.dataDir);
      const substrate = await startLocalSubstrate({
        dataDir: env.dataDir,
        port: env.LOCAL_SUBSTRATE_PORT,
        adminPort: env.LOCAL_SUBSTRATE_ADMIN_PORT,
        token: await ensureSubstrateTokenFile(tokens.tokenFile, "smk_local_"),
        adminToken: await ensureSubstrateTokenFile(tokens.adminTokenFile, "smk_admin_"),
        isQuiet: true,
      });
      owned.push({ name: "local substrate", stop: substrate.stop });
      childEnv.SMOLCLOUD_TOKEN_FILE = env.SMOLCLOUD_TOKEN_FILE ?? tokens.tokenFile;
      say(`local substrate (bubblewrap sandboxes — not a VM, cannot qualify production dispatch) at ${substrate.url}`);
    } else {
      say(`substrate: hosted SmolCloud at ${env.SMOLCLOUD_URL}`);
    }
    checkpoint();
    const forgeTokens = defaultForgeTokenFiles(env.dataDir);
    const forge = await startLocalForge({
      port: env.LOCAL_FORGE_PORT,
      adminPort: env.LOCAL_FORGE_ADMIN_PORT,
      token: await ensureTokenFile(forgeTokens.tokenFile, "forge_"),
      adminToken: await ensureTokenFile(forgeTokens.adminTokenFile, "forgeadmin_"),
      dataDir: env.dataDir,
    });
    owned.push({ name: "local forge", stop: forge.stop });
    say(`local forge (GitHub REST subset + git smart HTTP) at ${forge.url}`);
    checkpoint();
    // The demo's npm registry (issue 18): fixture packages on loopback, reached only by builder
    // guests through the registry broker. Nothing leaves the machine.
    const demoRegistry = await startFixtureRegistry(GREETER_FIXTURE_PACKAGES, { port: env.DEMO_REGISTRY_PORT });
    owned.push({ name: "demo registry", stop: demoRegistry.close });
    say(`demo npm registry (fixture packages for demo/greeter) at ${demoRegistry.url}`);
    checkpoint();
    seed = await seedDemoUsers(database.db, env.dataDir);
    await seedDemoEnvironment({
      db: database.db,
      forgeUrl: forge.url,
      forgeTokenFile: forgeTokens.tokenFile,
      demoRegistryUrl: demoRegistry.url,
      createForgeRepository: (repository) => createForgeRepository({ dataDir: env.dataDir, repository }),
    });
    checkpoint();

    // Supervised children: one that dies is restarted with backoff (the web app keeps serving while
    // the worker restarts); only Ctrl-C / SIGTERM stops everything. Each incarnation learns its
    // restart count (SCHOOLCORE_RESTART_COUNT) so the health panel can show it.
    supervisor = superviseChildren({
      log: say,
      children: [
        {
          name: "worker",
          start: (restartCount) =>
            // `node --import tsx`, not the tsx CLI: one process, so a kill (OOM, operator) hits the worker
            // itself and never leaves an orphan behind a dead wrapper.
            asSupervised(
              spawn(process.execPath, ["--import", "tsx", path.join(PROJECT_ROOT, "scripts", "worker.ts")], {
                cwd: PROJECT_ROOT,
                env: { ...childEnv, SCHOOLCORE_RESTART_COUNT: String(restartCount) },
                stdio: "inherit",
              }),
            ),
        },
        {
          name: "web app",
          // Our own server over Next's programmatic API, not `next start`: it hands the socket
          // address to the app (scripts/web-server.ts), so sign-in throttling counts the real peer.
          start: (restartCount) =>
            asSupervised(
              (web = spawn(process.execPath, ["--import", "tsx", path.join(PROJECT_ROOT, "scripts", "web-server.ts")], {
                cwd: PROJECT_ROOT,
                env: { ...childEnv, NEXT_TELEMETRY_DISABLED: "1", SCHOOLCORE_RESTART_COUNT: String(restartCount) },
                stdio: "inherit",
              })),
            ),
        },
        {
          // The guest-facing relay listener: POST /api/relay/v1/{op} only, outside the web app.
          name: "relay listener",
          start: (restartCount) =>
            asSupervised(
              spawn(process.execPath, ["--import", "tsx", path.join(PROJECT_ROOT, "scripts", "relay.ts")], {
                cwd: PROJECT_ROOT,
                env: { ...childEnv, SCHOOLCORE_RESTART_COUNT: String(restartCount) },
                stdio: "inherit",
              }),
            ),
        },
      ],
    });
    supervisor.start();
    await waitForHealth(url, () => web, 120_000, checkpoint);
  };

  startingUp = startUp();
  try {
    await startingUp;
  } catch (error) {
    // A stop asked for during start-up (the step in progress may fail of it: an interrupted
    // initdb or build) is not a failed start: the stop in progress finishes and exits.
    if (error instanceof StopRequested || stopReason) return;
    process.stderr.write(
      `[school-core] cannot start: ${isAppError(error) ? error.message : (error as Error).message}\n`,
    );
    await shutdown("start-up failed", 1);
    return;
  }
  say(`School-Core is running at ${url}`);
  say(
    `relay listener (guests on the HTTP relay channel; POST /api/relay/v1/{op} only) at ${relayListenerUrl(env)}${env.RELAY_PUBLIC_URL ? ` — guests are pointed at ${env.RELAY_PUBLIC_URL}` : ""}`,
  );
  if (seed?.kind === "created") {
    say("demo logins (shown once; also in " + seed.file + ", mode 600):");
    for (const c of seed.credentials) say(`  ${c.roles.join(",").padEnd(9)} ${c.email}  ${c.password}`);
  } else if (seed) {
    say(`demo logins: see ${seed.file}`);
  }
  say("press Ctrl-C to stop");
}

main().catch((error) => {
  process.stderr.write(`[school-core] cannot start: ${isAppError(error) ? error.message : (error as Error).message}\n`);
  process.exit(1);
});
