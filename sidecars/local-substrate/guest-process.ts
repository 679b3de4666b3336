/**
 * Runs one guest command: a fixed host wrapper (bash, operator code, no interpolation — all data
 * travels as argv) closes every inherited fd above 3 (an fd leaked into us by whoever started the
 * server must not reach a guest), opens the seccomp filter as fd 4 for bwrap's `--seccomp`,
 * writes itself into the machine's cgroups, then drops to the
 * machine's unprivileged uid with no capabilities and no_new_privs, applies the rlimits and execs
 * bubblewrap. bwrap's `--json-status-fd 3` tells us the guest's real exit code, and its absence
 * tells a sandbox set-up failure apart from a failing command.
 *
 * Reaping: bwrap's outer process exits as soon as its namespace init reports the exit status,
 * before that init has been reaped, so the init would be re-parented to host pid 1 as a zombie —
 * and zombies still count against the machine's pids.max until the host's init gets round to
 * them (measured: a third of rapid execs failed). So bwrap runs as pid 1 of a pid namespace of
 * its own (`unshare --pid --fork --kill-child`): when it exits, the kernel makes it reap every
 * descendant first, and `unshare` (our child) reaps it. `--pdeathsig KILL` ties the chain to us.
 *
 * Start signal: with `readyFd`, a pipe is open on that fd through the whole chain into the
 * sandbox, where the start shim (sandbox-args.ts, withStartSignal) writes one byte on it just
 * before it execs the command: `ready` resolves the moment the command is known to be starting,
 * with no fixed wait.
 *
 * Killing: SIGKILL to that outer bwrap (unshare's only child, checked to run as the machine's
 * uid) tears down both pid namespaces — detached and background children included.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import type { Writable } from "node:stream";

export const SANDBOX_WRAPPER = `
pids_procs=$1; mem_procs=$2; cpu_procs=$3; guest_uid=$4; seccomp_file=$5; ready_fd=$6; shift 6
for fd_path in /proc/$$/fd/*; do
  fd=\${fd_path##*/}
  if [[ $fd =~ ^[0-9]+$ ]] && (( fd > 3 )) && [[ $fd != "$ready_fd" ]]; then eval "exec $fd>&-"; fi
done
if [[ $seccomp_file != - ]]; then exec 4<"$seccomp_file" || exit 125; fi
if [[ $pids_procs != - ]]; then printf '%d\\n' $$ > "$pids_procs" || exit 125; fi
if [[ $mem_procs != - ]]; then printf '%d\\n' $$ > "$mem_procs" || exit 125; fi
if [[ $cpu_procs != - ]]; then printf '%d\\n' $$ > "$cpu_procs" || exit 125; fi
exec /usr/bin/setpriv --pdeathsig KILL -- /usr/bin/unshare --pid --fork --kill-child -- \\
  /usr/bin/setpriv --reuid="$guest_uid" --regid="$guest_uid" --clear-groups --inh-caps=-all --bounding-set=-all --no-new-privs -- /usr/bin/prlimit "$@"
`;

/** The fd the wrapper opens the seccomp filter on (after closing every inherited fd above 3). */
export const SECCOMP_FD = 4;

/** Nothing of the server's environment reaches the wrapper (bwrap also clears it for the guest). */
const EMPTY_ENV = {} as NodeJS.ProcessEnv;

export type TGuestRlimits = {
  maxProcesses: number;
  openFiles: number;
  fileSizeBytes: number;
  /** Only when no memory cgroup is available: a data-segment ceiling as the weaker fallback. */
  dataBytes?: number;
};

export type TCapturedOutput = { bytes: Buffer; isTruncated: boolean };

export type TGuestProcessResult =
  | { kind: "exited"; exitCode: number; stdout: TCapturedOutput; stderr: TCapturedOutput; durationMs: number }
  | { kind: "killed"; reason: TKillReason; stdout: TCapturedOutput; stderr: TCapturedOutput; durationMs: number }
  | { kind: "sandbox_failed"; message: string; durationMs: number };

export type TKillReason = "timeout" | "deleted" | "stopped" | "shutdown";

export type TGuestProcess = {
  /** Host pid of the sandbox chain's root (`unshare`). */
  hostPid: number | undefined;
  /** Host pid of the sandbox (the outer bwrap, running as the machine's uid) once the guest started; undefined if bwrap ended first. */
  started: Promise<number | undefined>;
  done: Promise<TGuestProcessResult>;
  /**
   * With `readyFd`: "running" once the start shim is exec'ing the command, "not_started" when it
   * found no such command or the sandbox ended before it said either. Without: "not_started" at the end.
   */
  ready: Promise<"running" | "not_started">;
  kill(reason: TKillReason): void;
};

export type TSpawnGuestOptions = {
  bwrapPath: string;
  bwrapArgs: string[];
  hostUid: number;
  cgroupProcs: { pids: string | undefined; memory: string | undefined; cpu?: string | undefined };
  /** The compiled seccomp filter, opened by the wrapper as fd SECCOMP_FD for bwrap's `--seccomp`. */
  seccompFile?: string;
  rlimits: TGuestRlimits;
  stdin?: string | undefined;
  captureBytes: number;
  timeoutMs: number;
  /** The fd the start shim reports on (READY_FD), for a background command wrapped in it. */
  readyFd?: number;
};

class CappedBuffer {
  readonly #chunks: Buffer[] = [];
  #size = 0;
  isTruncated = false;

  constructor(private readonly cap: number) {}

  push(chunk: Buffer): void {
    const room = this.cap - this.#size;
    if (room <= 0) {
      this.isTruncated = true;
      return; // keep draining the pipe so the guest never blocks on a full pipe
    }
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    if (kept.length < chunk.length) this.isTruncated = true;
    this.#chunks.push(kept);
    this.#size += kept.length;
  }

  output(): TCapturedOutput {
    return { bytes: Buffer.concat(this.#chunks), isTruncated: this.isTruncated };
  }
}

function rlimitArgs(limits: TGuestRlimits): string[] {
  const pair = (name: string, value: number) => `--${name}=${value}:${value}`;
  const args = [
    pair("nproc", limits.maxProcesses),
    pair("nofile", limits.openFiles),
    pair("fsize", limits.fileSizeBytes),
    pair("core", 0),
  ];
  if (limits.dataBytes !== undefined) args.push(pair("data", limits.dataBytes));
  return args;
}

function outerBwrapPid(unsharePid: number, uid: number): number | undefined {
  try {
    const children = readFileSync(`/proc/${unsharePid}/task/${unsharePid}/children`, "utf8")
      .trim()
      .split(/\s+/)
      .filter(Boolean)
      .map(Number);
    return children.find((pid) =>
      new RegExp(`^Uid:\\s+${uid}\\s`, "m").test(readFileSync(`/proc/${pid}/status`, "utf8")),
    );
  } catch {
    return undefined;
  }
}

export function spawnGuestProcess(options: TSpawnGuestOptions): TGuestProcess {
  const startedAt = Date.now();
  const child = spawn(
    "/bin/bash",
    [
      "--norc",
      "--noprofile",
      "-c",
      SANDBOX_WRAPPER,
      "school-core-sandbox",
      options.cgroupProcs.pids ?? "-",
      options.cgroupProcs.memory ?? "-",
      options.cgroupProcs.cpu ?? "-",
      String(options.hostUid),
      options.seccompFile ?? "-",
      options.readyFd === undefined ? "-" : String(options.readyFd),
      ...rlimitArgs(options.rlimits),
      "--",
      options.bwrapPath,
      ...options.bwrapArgs,
    ],
    { cwd: "/", env: EMPTY_ENV, stdio: stdioFor(options.readyFd) },
  );
  const stdout = new CappedBuffer(options.captureBytes);
  const stderr = new CappedBuffer(options.captureBytes);
  let statusText = "";
  let isStarted = false;
  let exitCode: number | undefined;
  let killReason: TKillReason | undefined;
  let resolveStarted: (pid: number | undefined) => void = () => undefined;
  const started = new Promise<number | undefined>((resolve) => (resolveStarted = resolve));
  let resolveReady: (outcome: "running" | "not_started") => void = () => undefined;
  const ready = new Promise<"running" | "not_started">((resolve) => (resolveReady = resolve));

  const isRunning = () => child.pid !== undefined && child.exitCode === null && child.signalCode === null;
  const signal = (pid: number) => {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  };
  const kill = (reason: TKillReason) => {
    killReason ??= reason;
    if (!isRunning()) return;
    // The outer bwrap is pid 1 of its namespace: killing it kills and reaps everything below, and
    // unshare then reaps it. Only a child of unshare running as the machine's uid is signalled, so
    // a recycled pid is never hit; without one (still starting), unshare itself is killed.
    const outer = outerBwrapPid(child.pid!, options.hostUid);
    signal(outer ?? child.pid!);
    setTimeout(() => {
      if (isRunning()) signal(child.pid!);
    }, 500).unref();
  };

  child.stdout!.on("data", (chunk: Buffer) => stdout.push(chunk));
  child.stderr!.on("data", (chunk: Buffer) => stderr.push(chunk));
  const status = child.stdio[3] as NodeJS.ReadableStream | null;
  status?.on("data", (chunk: Buffer) => {
    if (statusText.length > 65_536) return;
    statusText += chunk.toString("utf8");
    for (const line of statusText.split("\n")) {
      try {
        const parsed = JSON.parse(line) as Record<string, unknown>;
        if (typeof parsed["child-pid"] === "number" && !isStarted) {
          isStarted = true;
          // bwrap reports pids in its own namespace; callers get the sandbox's host pid instead.
          resolveStarted(outerBwrapPid(child.pid!, options.hostUid) ?? child.pid);
        }
        if (typeof parsed["exit-code"] === "number") exitCode = parsed["exit-code"];
      } catch {
        // a partial line; the next chunk completes it
      }
    }
  });

  const readyPipe =
    options.readyFd === undefined ? null : (child.stdio[options.readyFd] as NodeJS.ReadableStream | null);
  // The shim writes one byte before anything of the command runs; the first byte decides.
  readyPipe?.on("data", (chunk: Buffer) => resolveReady(chunk[0] === 0x52 /* R */ ? "running" : "not_started"));

  const timer = setTimeout(() => kill("timeout"), options.timeoutMs);
  timer.unref();

  const stdinStream = child.stdin as Writable;
  stdinStream.on("error", () => undefined); // a guest that never reads stdin closes it early
  stdinStream.end(options.stdin ?? "");

  const done = new Promise<TGuestProcessResult>((resolve) => {
    let isSettled = false;
    const settle = () => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timer);
      resolveStarted(undefined);
      resolveReady("not_started");
      const durationMs = Date.now() - startedAt;
      if (killReason)
        resolve({ kind: "killed", reason: killReason, stdout: stdout.output(), stderr: stderr.output(), durationMs });
      else if (exitCode !== undefined)
        resolve({ kind: "exited", exitCode, stdout: stdout.output(), stderr: stderr.output(), durationMs });
      else {
        const detail =
          stderr.output().bytes.toString("utf8").trim() || `sandbox exited with ${child.exitCode ?? child.signalCode}`;
        resolve({ kind: "sandbox_failed", message: detail, durationMs });
      }
    };
    child.on("error", (error) => {
      stderr.push(Buffer.from(error.message));
      settle();
    });
    child.on("close", settle);
    // Everything in the pid namespace dies with bwrap, so pipes close right after exit; this
    // guard only protects us from a pipe some future change might leak.
    child.on("exit", () => setTimeout(settle, 2000).unref());
  });

  return { hostPid: child.pid, started, done, ready, kill };
}

/** stdin, stdout, stderr, bwrap's status pipe (3); fd 4 is the wrapper's (seccomp); the start signal's pipe when asked for. */
function stdioFor(readyFd: number | undefined): ("pipe" | "ignore")[] {
  const stdio: ("pipe" | "ignore")[] = ["pipe", "pipe", "pipe", "pipe"];
  if (readyFd === undefined) return stdio;
  for (let fd = stdio.length; fd < readyFd; fd++) stdio.push("ignore");
  stdio.push("pipe");
  return stdio;
}
