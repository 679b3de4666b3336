/**
 * The one way the control plane starts its short-lived tools (git, sha256sum): through one small
 * launcher process per Node process (process-launcher-child.ts), started on first use. A `fork()`
 * from a large worker copies its page tables (~7 ms of CPU at 240 MB, blocking the event loop);
 * from the launcher it costs ~1 ms, whatever this process's size (issue 29: CPU per task).
 *
 * The launched process's piped streams are Unix sockets to a listener in a private 0700
 * directory, handed to it as its fds: the bytes go between it and this process directly, never
 * through the launcher. Each launch is published on the `school-core:launch` diagnostics channel
 * (file, pid, the caller's stack), so P4's host-process watch sees it as it saw a direct spawn.
 */
import { spawn, type ChildProcess } from "node:child_process";
import diagnosticsChannel from "node:diagnostics_channel";
import fs from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { PROJECT_ROOT } from "../project-root";

export const LAUNCH_CHANNEL = "school-core:launch";
const launchChannel = diagnosticsChannel.channel(LAUNCH_CHANNEL);

export type TLaunchMessage = { file: string; pid: number; stack: string };

export type TLaunchSpec = {
  file: string;
  args: readonly string[];
  env: Readonly<Record<string, string>>;
  cwd: string;
  /** A new session and process group, so kill() reaches the process's own children too. */
  detached?: boolean;
  /** "held": kept in the launcher for a later process to write into (its `stdout: <this process>`). */
  stdin?: "pipe" | "ignore" | "held";
  /** Another launched process (stdin "held"): this one's output goes straight into it. */
  stdout?: "pipe" | "ignore" | TLaunchedProcess;
  stderr?: "pipe" | "ignore";
};

export type TLaunchExit = { code: number | null; signal: NodeJS.Signals | null; isLauncherLost?: boolean };

export type TLaunchedProcess = {
  readonly id: number;
  readonly pid: number;
  readonly stdin: net.Socket | null;
  readonly stdout: net.Socket | null;
  readonly stderr: net.Socket | null;
  /** Resolves when the process has exited (its streams may still hold unread bytes). */
  readonly exited: Promise<TLaunchExit>;
  /** Signals the process (its whole group when detached). */
  kill(signal?: NodeJS.Signals): void;
  /** Drops a held stdin no other process took (the process then sees the end of its input). */
  release(): void;
};

/** A launch that failed to start (the file is missing, the launcher is gone): `code` as Node's. */
export class LaunchError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "LaunchError";
  }
}

type TPending = {
  streams: (net.Socket | undefined)[];
  expectedFds: number[];
  pid?: number;
  resolveLaunch(process: TLaunchedProcess): void;
  rejectLaunch(error: Error): void;
  resolveExit(exit: TLaunchExit): void;
  isLaunched: boolean;
  earlyExit?: TLaunchExit;
  spec: TLaunchSpec;
  stack: string;
};

type TLauncher = { child: ChildProcess; server: net.Server; directory: string; pid: number };

type TLauncherState = {
  launcher: Promise<TLauncher> | undefined;
  launcherChild: ChildProcess | undefined;
  launcherProcessId: number | undefined;
  nextId: number;
  pending: Map<number, TPending>;
};

// One launcher per process, even when this module is loaded twice (the Next.js server bundle has
// its own copy beside the one its start script loaded): the state lives on globalThis.
const STATE_KEY = Symbol.for("school-core.process-launcher");
const state: TLauncherState =
  ((globalThis as Record<symbol, unknown>)[STATE_KEY] as TLauncherState | undefined) ??
  (((globalThis as Record<symbol, unknown>)[STATE_KEY] = {
    launcher: undefined,
    launcherChild: undefined,
    launcherProcessId: undefined,
    nextId: 1,
    pending: new Map<number, TPending>(),
  } satisfies TLauncherState) as TLauncherState);
const pending = state.pending;

const CHILD_FILE = path.join(PROJECT_ROOT, "lib", "system", "process-launcher-child.ts");
const HEADER_BYTES = 5;

/** The launcher's pid once it runs (P4's watch counts its children as this process's). */
export function launcherPid(): number | undefined {
  return state.launcherProcessId;
}

function holdChannelWhileBusy(): void {
  // The IPC channel keeps this process alive only while something is in flight: an idle launcher
  // never holds a CLI command or a test file open.
  const channel = state.launcherChild?.channel as { ref?(): void; unref?(): void } | undefined;
  if (pending.size > 0) channel?.ref?.();
  else channel?.unref?.();
}

function acceptStream(socket: net.Socket): void {
  socket.once("error", () => undefined);
  const onReadable = () => {
    const header = socket.read(HEADER_BYTES) as Buffer | null;
    if (!header) {
      socket.once("readable", onReadable);
      return;
    }
    const request = pending.get(header.readUInt32BE(0));
    const fd = header[4]!;
    if (!request || !request.expectedFds.includes(fd) || request.streams[fd] || request.isLaunched) {
      socket.destroy();
      return;
    }
    request.streams[fd] = socket;
    settleLaunchIfComplete(header.readUInt32BE(0), request);
  };
  socket.once("readable", onReadable);
}

function settleLaunchIfComplete(id: number, request: TPending): void {
  if (request.isLaunched || request.pid === undefined) return;
  if (request.expectedFds.some((fd) => !request.streams[fd])) return;
  request.isLaunched = true;
  const pid = request.pid;
  const exited = new Promise<TLaunchExit>((resolve) => (request.resolveExit = resolve));
  if (request.earlyExit) {
    pending.delete(id);
    request.resolveExit(request.earlyExit);
  }
  const isDetached = request.spec.detached === true;
  request.resolveLaunch({
    id,
    pid,
    stdin: request.streams[0] ?? null,
    stdout: request.streams[1] ?? null,
    stderr: request.streams[2] ?? null,
    exited,
    kill(signal: NodeJS.Signals = "SIGKILL") {
      try {
        process.kill(isDetached ? -pid : pid, signal);
      } catch {
        // already gone
      }
    },
    release() {
      void state.launcher?.then(({ child }) => child.connected && child.send({ type: "release", id }));
    },
  });
  if (launchChannel.hasSubscribers)
    launchChannel.publish({ file: request.spec.file, pid, stack: request.stack } satisfies TLaunchMessage);
}

function onLauncherMessage(message: {
  type: string;
  id: number;
  pid?: number;
  code?: unknown;
  signal?: unknown;
  message?: string;
}): void {
  const request = pending.get(message.id);
  if (!request) return;
  if (message.type === "spawned") {
    request.pid = message.pid;
    settleLaunchIfComplete(message.id, request);
  } else if (message.type === "error") {
    pending.delete(message.id);
    for (const stream of request.streams) stream?.destroy();
    request.rejectLaunch(new LaunchError(String(message.code ?? "ESPAWN"), message.message ?? "could not start"));
  } else if (message.type === "exit") {
    const exit: TLaunchExit = {
      code: typeof message.code === "number" ? message.code : null,
      signal: typeof message.signal === "string" ? (message.signal as NodeJS.Signals) : null,
    };
    // A quick process can end before this side has accepted all of its streams: keep the exit
    // until the launch settles (the streams still hold what it wrote).
    if (!request.isLaunched) request.earlyExit = exit;
    else {
      pending.delete(message.id);
      request.resolveExit(exit);
    }
  }
  holdChannelWhileBusy();
}

function failEverythingPending(reason: string): void {
  for (const [id, request] of pending) {
    pending.delete(id);
    if (request.isLaunched) request.resolveExit({ code: null, signal: null, isLauncherLost: true });
    else {
      for (const stream of request.streams) stream?.destroy();
      request.rejectLaunch(new LaunchError("ELAUNCHER", reason));
    }
  }
}

async function startLauncher(): Promise<TLauncher> {
  const directory = await fs.promises.mkdtemp(path.join(os.tmpdir(), "schoolcore-launcher-"));
  await fs.promises.chmod(directory, 0o700);
  const socketPath = path.join(directory, "streams.sock");
  const server = net.createServer({ pauseOnConnect: false }, acceptStream);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(socketPath, () => resolve());
  });
  server.unref();
  // Only PATH: the launcher passes each process its complete environment, and has no secrets of ours.
  const launcherEnv: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
  const child: ChildProcess = spawn(
    process.execPath,
    ["--experimental-strip-types", "--disable-warning=ExperimentalWarning", CHILD_FILE, socketPath],
    {
      stdio: ["ignore", "ignore", "inherit", "ipc"],
      env: launcherEnv as NodeJS.ProcessEnv,
    },
  );
  child.unref();
  // Known before it is ready: a /proc scan that sees it start (P4's watch) knows it is the launcher.
  state.launcherProcessId = child.pid;
  const ready = new Promise<number>((resolve, reject) => {
    child.once("error", reject);
    child.once("exit", (code) => reject(new LaunchError("ELAUNCHER", `the process launcher exited (${code})`)));
    child.on("message", (message: { type: string; pid?: number }) => {
      if (message.type === "ready") resolve(message.pid ?? child.pid ?? 0);
    });
  });
  let pid: number;
  try {
    pid = await ready;
  } catch (error) {
    state.launcherProcessId = undefined;
    server.close();
    await fs.promises.rm(directory, { recursive: true, force: true });
    throw error instanceof LaunchError ? error : new LaunchError("ELAUNCHER", (error as Error).message);
  }
  child.removeAllListeners("message");
  child.removeAllListeners("exit");
  child.on("message", onLauncherMessage);
  child.once("exit", () => {
    state.launcher = undefined;
    state.launcherChild = undefined;
    state.launcherProcessId = undefined;
    server.close();
    fs.rmSync(directory, { recursive: true, force: true });
    failEverythingPending("the process launcher ended");
  });
  state.launcherChild = child;
  holdChannelWhileBusy();
  state.launcherProcessId = pid;
  return { child, server, directory, pid };
}

/** Starts a process through the launcher; resolves once it runs and its piped streams are connected. */
export async function launchProcess(spec: TLaunchSpec): Promise<TLaunchedProcess> {
  const stack = new Error().stack ?? "";
  state.launcher ??= startLauncher().catch((error: unknown) => {
    state.launcher = undefined;
    throw error;
  });
  const { child } = await state.launcher;
  const id = state.nextId++;
  const stdio = [
    spec.stdin === "held" ? "held" : (spec.stdin ?? "pipe") === "pipe" ? "socket" : "ignore",
    typeof spec.stdout === "object"
      ? { stdinOf: spec.stdout.id }
      : (spec.stdout ?? "pipe") === "pipe"
        ? "socket"
        : "ignore",
    (spec.stderr ?? "pipe") === "pipe" ? "socket" : "ignore",
  ] as const;
  const expectedFds = stdio.flatMap((s, fd) => (s === "socket" ? [fd] : []));
  return new Promise<TLaunchedProcess>((resolveLaunch, rejectLaunch) => {
    pending.set(id, {
      streams: [],
      expectedFds,
      resolveLaunch,
      rejectLaunch,
      resolveExit: () => undefined,
      isLaunched: false,
      spec,
      stack,
    });
    holdChannelWhileBusy();
    const sent = child.send(
      {
        type: "spawn",
        id,
        file: spec.file,
        args: [...spec.args],
        env: { ...spec.env },
        cwd: spec.cwd,
        detached: spec.detached === true,
        stdio,
      },
      (error) => {
        if (!error) return;
        pending.delete(id);
        rejectLaunch(new LaunchError("ELAUNCHER", `the process launcher did not take the request: ${error.message}`));
      },
    );
    if (!sent && !child.connected) {
      pending.delete(id);
      rejectLaunch(new LaunchError("ELAUNCHER", "the process launcher is not connected"));
    }
  }).finally(holdChannelWhileBusy);
}

/**
 * Stops this process's launcher and waits until it has exited (so it is reaped here, not left to
 * whoever inherits it): part of a graceful stop. Processes it started are not waited for.
 */
export async function stopProcessLauncher(timeoutMs = 2_000): Promise<void> {
  const running = await state.launcher?.catch(() => undefined);
  const child = running?.child;
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  if (child.connected) child.disconnect();
  const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
  await exited;
  clearTimeout(timer);
}
