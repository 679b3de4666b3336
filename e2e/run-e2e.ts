/**
 * Runs the Playwright suite against the real system: `scripts/start.ts` (what `npm start` runs)
 * on a fresh DATA_DIR and free ports, then checks that Ctrl-C stops everything and that a
 * restart keeps the data (the demo logins still work, nothing is re-seeded), and last that Ctrl-C
 * at any moment — during start-up, right after, under load — leaves no process and no port
 * behind (e2e/stop-everything.ts; it needs the build the first start made). The system is started
 * configured for OpenID Connect sign-in against a loopback port that e2e/oidc-sign-in.spec.ts
 * serves its own provider on (next-auth discovers the provider at each sign-in, not at boot).
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { findFreePorts } from "../lib/testing/free-port";
import { checkCtrlCStopsEverything } from "./stop-everything";

const ROOT = path.resolve(import.meta.dirname, "..");
const PLAYWRIGHT = path.join(ROOT, "node_modules", "@playwright", "test", "cli.js");

type Running = { child: ChildProcess; output: () => string };

async function startSystem(env: NodeJS.ProcessEnv): Promise<Running> {
  // `node --import tsx`, as `npm start` runs it: the tsx CLI's wrapper relays a signal and SIGKILLs a
  // launcher that does not acknowledge it within 30 ms, which a busy machine misses (issue 27, item 7).
  const child = spawn(process.execPath, ["--import", "tsx", path.join(ROOT, "scripts", "start.ts")], {
    cwd: ROOT,
    env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => {
    output += d.toString();
    process.stdout.write(d);
  });
  child.stderr!.on("data", (d: Buffer) => {
    output += d.toString();
    process.stderr.write(d);
  });
  const deadline = Date.now() + 300_000;
  // The banner's last line: the lines before it (URLs, demo logins) may arrive in later chunks.
  while (!output.includes("press Ctrl-C to stop")) {
    if (child.exitCode !== null) throw new Error(`the system exited during start-up (code ${child.exitCode})`);
    if (Date.now() > deadline) throw new Error("the system did not start within 300 s");
    await new Promise((r) => setTimeout(r, 250));
  }
  return { child, output: () => output };
}

async function stopSystem(running: Running): Promise<void> {
  const exited = new Promise<number | null>((resolve) => running.child.once("exit", (code) => resolve(code)));
  running.child.kill("SIGINT");
  const code = await Promise.race([exited, new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 60_000))]);
  if (code !== 0) throw new Error(`Ctrl-C did not stop the system cleanly (exit ${code})`);
  if (!running.output().includes("[school-core] stopped")) throw new Error("the system did not report a clean stop");
}

function runPlaywright(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [PLAYWRIGHT, "test", ...args], { cwd: ROOT, env, stdio: "inherit" });
    child.on("exit", (code) => resolve(code ?? 1));
  });
}

async function readDemoLogins(dataDir: string): Promise<Record<string, { email: string; password: string }>> {
  const text = await fs.readFile(path.join(dataDir, "demo-credentials.txt"), "utf8");
  const logins: Record<string, { email: string; password: string }> = {};
  for (const line of text.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const [roles, email, password] = line.split("\t");
    logins[roles!] = { email: email!, password: password! };
  }
  return logins;
}

async function main() {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-e2e-"));
  await fs.chmod(dataDir, 0o755);
  // Distinct ports, all held while they are chosen: two services given one port fail to start.
  const [
    port,
    pgPort,
    substratePort,
    substrateAdminPort,
    forgePort,
    forgeAdminPort,
    relayPort,
    registryPort,
    oidcPort,
  ] = await findFreePorts(9);
  // The OIDC client secret, a file like every secret; outside DATA_DIR so no backup or listing of it sees it.
  const oidcDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-e2e-oidc-"));
  const oidcClientSecret = randomBytes(24).toString("base64url");
  await fs.writeFile(path.join(oidcDir, "client-secret"), `${oidcClientSecret}\n`, { mode: 0o600 });
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOSTNAME: "127.0.0.1",
    EMBEDDED_PG_PORT: String(pgPort),
    LOCAL_SUBSTRATE_PORT: String(substratePort),
    LOCAL_SUBSTRATE_ADMIN_PORT: String(substrateAdminPort),
    LOCAL_FORGE_PORT: String(forgePort),
    LOCAL_FORGE_ADMIN_PORT: String(forgeAdminPort),
    // Never the defaults: another run (or `npm start`) on this machine may hold them, and a
    // shared relay port would let one system's guests reach the other's relay listener.
    RELAY_PORT: String(relayPort),
    DEMO_REGISTRY_PORT: String(registryPort),
    DATABASE_URL: "",
    OIDC_ISSUER: `http://127.0.0.1:${oidcPort}`,
    OIDC_CLIENT_ID: "school-core-e2e",
    OIDC_CLIENT_SECRET_FILE: path.join(oidcDir, "client-secret"),
    OIDC_NAME: "Test School",
  };
  let failures = 0;
  try {
    let running = await startSystem(env);
    const logins = await readDemoLogins(dataDir);
    const testEnv = {
      ...env,
      E2E_BASE_URL: `http://127.0.0.1:${port}`,
      E2E_DATA_DIR: dataDir,
      E2E_OPERATOR_EMAIL: logins.operator!.email,
      E2E_OPERATOR_PASSWORD: logins.operator!.password,
      E2E_TEACHER_EMAIL: logins.teacher!.email,
      E2E_TEACHER_PASSWORD: logins.teacher!.password,
      E2E_OIDC_PORT: String(oidcPort),
      E2E_OIDC_CLIENT_SECRET: oidcClientSecret,
    };
    try {
      failures += (await runPlaywright(process.argv.slice(2), testEnv)) === 0 ? 0 : 1;
    } finally {
      await stopSystem(running);
    }

    // Restart on the same DATA_DIR: same data, no second seed, the same logins work.
    running = await startSystem(env);
    try {
      if (!running.output().includes("demo logins: see")) throw new Error("restart re-seeded the demo users");
      failures +=
        (await runPlaywright(["--grep", "@restart", "--output", "test-results/restart"], testEnv)) === 0 ? 0 : 1;
    } finally {
      await stopSystem(running);
    }

    const stopProblems = await checkCtrlCStopsEverything();
    for (const problem of stopProblems) process.stderr.write(`e2e: Ctrl-C: ${problem}\n`);
    failures += stopProblems.length > 0 ? 1 : 0;
  } finally {
    await fs.rm(dataDir, { recursive: true, force: true });
    await fs.rm(oidcDir, { recursive: true, force: true });
  }
  if (failures > 0) {
    process.stderr.write(`e2e: ${failures} Playwright run(s) or the Ctrl-C check failed\n`);
    process.exit(1);
  }
  process.stdout.write("e2e: all Playwright runs passed; Ctrl-C stop (at every moment) and restart verified\n");
}

main().catch((error) => {
  process.stderr.write(`e2e: ${(error as Error).message}\n`);
  process.exit(1);
});
