/**
 * `npm start`: the whole system on embedded defaults. Builds the web app if needed, starts (or
 * reuses) embedded PostgreSQL, migrates, seeds demo data once, starts the worker, the web app
 * (scripts/web-server.ts) and the relay listener (scripts/relay.ts), and prints their URLs. The worker and the web app are supervised: a child that dies is restarted
 * with backoff (lib/system/supervise-children.ts). Ctrl-C stops everything, PostgreSQL last.
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
import { superviseChildren } from "../lib/system/supervise-children";
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

function run(command: string, args: string[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: PROJECT_ROOT, env, stdio: "inherit" });
    child.on("error", reject);
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`${path.basename(args[0] ?? command)} exited with ${code}`))));
  });
}

/** The first start must answer: a web app that cannot even come up once is a failed start, not a restart loop. */
async function waitForHealth(url: string, currentWeb: () => ChildProcess | undefined, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const child = currentWeb();
    if (child && (child.exitCode !== null || child.signalCode !== null)) throw new Error("the web app exited during start-up");
    try {
      const response = await fetch(`${url}/api/health`);
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

  ensureBubblewrap(say);
  // Traverse-only for others, not 0700: the embedded PostgreSQL (as root, user postgres) and the
  // local substrate's sandbox uids enter it by name; what they may not see is 0700 below it.
  await fs.promises.mkdir(env.dataDir, { recursive: true, mode: 0o711 });
  const database = await openDatabase(env, { migrate: true, log: (line) => say(line) });
  childEnv.DATABASE_URL = database.handle.url;
  const services: { name: string; stop(): Promise<void> }[] = [];
  const stopServices = async () => {
    for (const service of services.reverse())
      await service.stop().catch((error: Error) => say(`stopping ${service.name} failed: ${error.message}`));
  };

  let seed: Awaited<ReturnType<typeof seedDemoUsers>>;
  try {
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
      services.push({ name: "local substrate", stop: substrate.stop });
      childEnv.SMOLCLOUD_TOKEN_FILE = env.SMOLCLOUD_TOKEN_FILE ?? tokens.tokenFile;
      say(`local substrate (bubblewrap sandboxes — not a VM, cannot qualify production dispatch) at ${substrate.url}`);
    } else {
      say(`substrate: hosted SmolCloud at ${env.SMOLCLOUD_URL}`);
    }
    const forgeTokens = defaultForgeTokenFiles(env.dataDir);
    const forge = await startLocalForge({
      port: env.LOCAL_FORGE_PORT,
      adminPort: env.LOCAL_FORGE_ADMIN_PORT,
      token: await ensureTokenFile(forgeTokens.tokenFile, "forge_"),
      adminToken: await ensureTokenFile(forgeTokens.adminTokenFile, "forgeadmin_"),
      dataDir: env.dataDir,
    });
    services.push({ name: "local forge", stop: forge.stop });
    say(`local forge (GitHub REST subset + git smart HTTP) at ${forge.url}`);
    // The demo's npm registry (issue 18): fixture packages on loopback, reached only by builder
    // guests through the registry broker. Nothing leaves the machine.
    const demoRegistry = await startFixtureRegistry(GREETER_FIXTURE_PACKAGES, { port: env.DEMO_REGISTRY_PORT });
    services.push({ name: "demo registry", stop: demoRegistry.close });
    say(`demo npm registry (fixture packages for demo/greeter) at ${demoRegistry.url}`);
    seed = await seedDemoUsers(database.db, env.dataDir);
    await seedDemoEnvironment({
      db: database.db,
      forgeUrl: forge.url,
      forgeTokenFile: forgeTokens.tokenFile,
      demoRegistryUrl: demoRegistry.url,
      createForgeRepository: (repository) => createForgeRepository({ dataDir: env.dataDir, repository }),
    });
  } catch (error) {
    await stopServices();
    await database.close();
    throw error;
  }

  // Supervised children: one that dies is restarted with backoff (the web app keeps serving while
  // the worker restarts); only Ctrl-C / SIGTERM stops everything. Each incarnation learns its
  // restart count (SCHOOLCORE_RESTART_COUNT) so the health panel can show it.
  let web: ChildProcess | undefined;
  const supervisor = superviseChildren({
    log: say,
    children: [
      {
        name: "worker",
        start: (restartCount) =>
          // `node --import tsx`, not the tsx CLI: one process, so a kill (OOM, operator) hits the worker
          // itself and never leaves an orphan behind a dead wrapper.
          spawn(process.execPath, ["--import", "tsx", path.join(PROJECT_ROOT, "scripts", "worker.ts")], {
            cwd: PROJECT_ROOT,
            env: { ...childEnv, SCHOOLCORE_RESTART_COUNT: String(restartCount) },
            stdio: "inherit",
          }),
      },
      {
        name: "web app",
        // Our own server over Next's programmatic API, not `next start`: it hands the socket
        // address to the app (scripts/web-server.ts), so sign-in throttling counts the real peer.
        start: (restartCount) =>
          (web = spawn(process.execPath, ["--import", "tsx", path.join(PROJECT_ROOT, "scripts", "web-server.ts")], {
            cwd: PROJECT_ROOT,
            env: { ...childEnv, NEXT_TELEMETRY_DISABLED: "1", SCHOOLCORE_RESTART_COUNT: String(restartCount) },
            stdio: "inherit",
          })),
      },
      {
        // The guest-facing relay listener: POST /api/relay/v1/{op} only, outside the web app.
        name: "relay listener",
        start: (restartCount) =>
          spawn(process.execPath, ["--import", "tsx", path.join(PROJECT_ROOT, "scripts", "relay.ts")], {
            cwd: PROJECT_ROOT,
            env: { ...childEnv, SCHOOLCORE_RESTART_COUNT: String(restartCount) },
            stdio: "inherit",
          }),
      },
    ],
  });
  supervisor.start();

  let isStopping = false;
  const shutdown = async (reason: string, exitCode: number) => {
    if (isStopping) return;
    isStopping = true;
    say(`stopping (${reason})`);
    await supervisor.stop();
    await stopServices();
    await database.close();
    say("stopped");
    process.exit(exitCode);
  };
  process.on("SIGINT", () => void shutdown("SIGINT", 0));
  process.on("SIGTERM", () => void shutdown("SIGTERM", 0));

  try {
    await waitForHealth(url, () => web, 120_000);
  } catch (error) {
    await shutdown((error as Error).message, 1);
    return;
  }
  say(`School-Core is running at ${url}`);
  say(
    `relay listener (guests on the HTTP relay channel; POST /api/relay/v1/{op} only) at ${relayListenerUrl(env)}${env.RELAY_PUBLIC_URL ? ` — guests are pointed at ${env.RELAY_PUBLIC_URL}` : ""}`,
  );
  if (seed.kind === "created") {
    say("demo logins (shown once; also in " + seed.file + ", mode 600):");
    for (const c of seed.credentials) say(`  ${c.roles.join(",").padEnd(9)} ${c.email}  ${c.password}`);
  } else {
    say(`demo logins: see ${seed.file}`);
  }
  say("press Ctrl-C to stop");
}

main().catch((error) => {
  process.stderr.write(`[school-core] cannot start: ${isAppError(error) ? error.message : (error as Error).message}\n`);
  process.exit(1);
});
