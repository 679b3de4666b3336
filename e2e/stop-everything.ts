/**
 * Ctrl-C stops everything, always (issue 27, item 7): `npm start` is started the way a terminal
 * runs it (its own process group) on a fresh DATA_DIR and free ports, and SIGINT goes
 * to that whole group at several moments — during start-up (right after PostgreSQL came up, and
 * while the demo is being seeded), right after the system is up, and under load (web and relay
 * requests in flight, one of them a connection that never finishes its request). Each time the
 * launcher must exit cleanly within the deadline, and nothing may remain: no process of the
 * group, no process of this DATA_DIR (the detached PostgreSQL included), no listener on any
 * of the ports, no postmaster.pid. It needs the web app's build (run-e2e.ts runs it after a
 * start has built it); run alone: `npx tsx e2e/stop-everything.ts`.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { forceStopEmbeddedPostgres } from "../lib/db/embedded-postgres";
import { findFreePorts } from "../lib/testing/free-port";
import { listProcesses, signalEach } from "../lib/system/process-tree";

const ROOT = path.resolve(import.meta.dirname, "..");
/** The launcher's own watchdog is 40 s; a stop that needs longer is a failure. */
const STOP_DEADLINE_MS = 45_000;
const START_DEADLINE_MS = 240_000;

const PORT_VARIABLES = [
  "PORT",
  "EMBEDDED_PG_PORT",
  "RELAY_PORT",
  "LOCAL_SUBSTRATE_PORT",
  "LOCAL_SUBSTRATE_ADMIN_PORT",
  "LOCAL_FORGE_PORT",
  "LOCAL_FORGE_ADMIN_PORT",
  "DEMO_REGISTRY_PORT",
] as const;

type TSystem = { dataDir: string; env: NodeJS.ProcessEnv; ports: Record<(typeof PORT_VARIABLES)[number], number> };

type TRunning = { child: ChildProcess; output: () => string };

function say(line: string) {
  process.stdout.write(`[stop-everything] ${line}\n`);
}

async function createSystem(): Promise<TSystem> {
  const dataDir = await fsp.mkdtemp(path.join(os.tmpdir(), "schoolcore-stop-"));
  await fsp.chmod(dataDir, 0o755);
  const free = await findFreePorts(PORT_VARIABLES.length);
  const ports = Object.fromEntries(PORT_VARIABLES.map((name, i) => [name, free[i]!])) as TSystem["ports"];
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    ...Object.fromEntries(Object.entries(ports).map(([name, port]) => [name, String(port)])),
    DATA_DIR: dataDir,
    HOSTNAME: "127.0.0.1",
    DATABASE_URL: "",
  };
  return { dataDir, env, ports };
}

/** `npm start`, as a terminal starts a job: a process group of its own, which Ctrl-C signals as a whole. */
function launch(system: TSystem): TRunning {
  const child = spawn("npm", ["start", "--silent"], {
    cwd: ROOT,
    env: system.env,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  return { child, output: () => output };
}

async function waitForOutput(running: TRunning, text: string): Promise<void> {
  const deadline = Date.now() + START_DEADLINE_MS;
  while (!running.output().includes(text)) {
    if (running.child.exitCode !== null)
      throw new Error(`the system exited before "${text}":\n${running.output().slice(-3000)}`);
    if (Date.now() > deadline) throw new Error(`no "${text}" within ${START_DEADLINE_MS / 1000} s`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

function readProcText(pid: number, file: "cmdline" | "environ"): string {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, "utf8");
  } catch {
    return "";
  }
}

/** Every process that belongs to this run: in the launcher's group, or naming its DATA_DIR (PostgreSQL's `-D`, a child's environment). */
function findLeftovers(system: TSystem, groupId: number): number[] {
  return listProcesses()
    .filter((p) => p.pid !== process.pid)
    .filter(
      (p) =>
        p.pgid === groupId ||
        readProcText(p.pid, "cmdline").includes(system.dataDir) ||
        readProcText(p.pid, "environ").split("\0").includes(`DATA_DIR=${system.dataDir}`),
    )
    .map((p) => p.pid);
}

function isListening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: "127.0.0.1", port });
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function describeLeftovers(system: TSystem, groupId: number): Promise<string[]> {
  const problems: string[] = [];
  for (const pid of findLeftovers(system, groupId))
    problems.push(`process ${pid} still runs: ${readProcText(pid, "cmdline").split("\0").join(" ").slice(0, 200)}`);
  for (const [name, port] of Object.entries(system.ports))
    if (await isListening(port)) problems.push(`${name} ${port} still has a listener`);
  if (fs.existsSync(path.join(system.dataDir, "postgres", "postmaster.pid")))
    problems.push("postgres/postmaster.pid is still there");
  return problems;
}

/** Whatever a failed check left behind goes, so the next scenario (and the machine) starts clean. */
async function killLeftovers(system: TSystem, groupId: number): Promise<void> {
  signalEach([-groupId], "SIGKILL");
  signalEach(findLeftovers(system, groupId), "SIGKILL");
  await forceStopEmbeddedPostgres(system.dataDir).catch(() => undefined);
}

/** Keeps a few requests in flight: pages and health checks, a relay call, and a request whose body never finishes. */
function startLoad(system: TSystem): () => void {
  const controller = new AbortController();
  const sockets: net.Socket[] = [];
  const web = `http://127.0.0.1:${system.ports.PORT}`;
  for (const pathname of ["/sign-in", "/api/health", "/sign-in", "/", "/api/health", "/sign-in"])
    void fetch(`${web}${pathname}`, { signal: controller.signal }).catch(() => undefined);
  void fetch(`http://127.0.0.1:${system.ports.RELAY_PORT}/api/relay/v1/chat`, {
    method: "POST",
    headers: { authorization: "Bearer not-a-handle", "content-type": "application/json" },
    body: "{}",
    signal: controller.signal,
  }).catch(() => undefined);
  for (const port of [system.ports.PORT, system.ports.RELAY_PORT]) {
    const socket = net.connect({ host: "127.0.0.1", port }, () =>
      socket.write(`POST /api/relay/v1/chat HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: 1000000\r\n\r\n{"partial":`),
    );
    socket.on("error", () => undefined);
    sockets.push(socket);
  }
  return () => {
    controller.abort();
    for (const socket of sockets) socket.destroy();
  };
}

type TMoment = { name: string; after: string; withLoad?: boolean };

const MOMENTS: TMoment[] = [
  { name: "during start-up, right after PostgreSQL came up", after: "embedded PostgreSQL started" },
  { name: "during start-up, while the demo is seeded", after: "demo npm registry" },
  { name: "right after the system is up", after: "press Ctrl-C to stop" },
  { name: "under load (web and relay requests in flight)", after: "press Ctrl-C to stop", withLoad: true },
];

async function stopAt(system: TSystem, moment: TMoment): Promise<string[]> {
  const running = launch(system);
  const groupId = running.child.pid!;
  // npm re-raises the SIGINT it got once its script has exited: a clean stop is code 0 or that signal
  const exited = new Promise<string>((resolve) =>
    running.child.once("exit", (code, signal) => resolve(signal ?? String(code))),
  );
  let stopLoad: () => void = () => undefined;
  try {
    await waitForOutput(running, moment.after);
    if (moment.withLoad) {
      stopLoad = startLoad(system);
      await new Promise((r) => setTimeout(r, 300));
    }
    const startedAt = Date.now();
    process.kill(-groupId, "SIGINT");
    const outcome = await Promise.race([
      exited,
      new Promise<"timeout">((r) => setTimeout(() => r("timeout"), STOP_DEADLINE_MS)),
    ]);
    const seconds = ((Date.now() - startedAt) / 1000).toFixed(1);
    const problems: string[] = [];
    if (outcome === "timeout") problems.push(`the launcher did not exit within ${STOP_DEADLINE_MS / 1000} s`);
    else if (outcome !== "0" && outcome !== "SIGINT") problems.push(`the launcher exited with ${outcome}`);
    else if (!running.output().includes("[school-core] stopped"))
      problems.push("the launcher did not report a clean stop");
    // what a lost child would still be doing a moment after the launcher is gone
    await new Promise((r) => setTimeout(r, 500));
    problems.push(...(await describeLeftovers(system, groupId)));
    say(`${moment.name}: ${problems.length === 0 ? `stopped in ${seconds} s, nothing left` : problems.join("; ")}`);
    if (problems.length > 0) say(`output:\n${running.output().slice(-4000)}`);
    return problems;
  } finally {
    stopLoad();
    await killLeftovers(system, groupId);
  }
}

/** Every moment, on one DATA_DIR (a later start also proves the earlier stop freed its ports). Returns the problems found. */
export async function checkCtrlCStopsEverything(): Promise<string[]> {
  const system = await createSystem();
  try {
    const problems: string[] = [];
    for (const moment of MOMENTS) problems.push(...(await stopAt(system, moment)).map((p) => `${moment.name}: ${p}`));
    return problems;
  } finally {
    await fsp.rm(system.dataDir, { recursive: true, force: true });
  }
}

if (process.argv[1] && path.resolve(process.argv[1]) === path.resolve(import.meta.filename)) {
  checkCtrlCStopsEverything().then(
    (problems) => {
      if (problems.length === 0) return say("Ctrl-C stopped everything at every moment");
      for (const problem of problems) process.stderr.write(`[stop-everything] ${problem}\n`);
      process.exit(1);
    },
    (error: Error) => {
      process.stderr.write(`[stop-everything] ${error.message}\n`);
      process.exit(1);
    },
  );
}
