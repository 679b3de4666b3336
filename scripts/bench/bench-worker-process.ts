/**
 * A real worker process (scripts/worker.ts) started for the lifecycle bench, and the CPU it has
 * used, read from /proc: the bench's control-plane CPU per task is the difference of these. The
 * worker's process tree is counted — its process launcher (lib/system/process-launcher.ts) and the
 * git it starts are the worker's work, done in another process.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { PROJECT_ROOT } from "../../lib/project-root";
import { listDescendants } from "../../lib/system/process-tree";

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** utime + stime (own) and cutime + cstime (children it reaped) of one process, in seconds (fields 14–17 of /proc/PID/stat). */
export async function cpuOf(pid: number): Promise<{ own: number; reaped: number }> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state): field n is fields[n - 3]
  const field = (n: number) => Number(fields[n - 3]) / TICKS_PER_SECOND;
  return { own: field(14) + field(15), reaped: field(16) + field(17) };
}

/**
 * The CPU of a process tree, split: the root itself, the other live processes below it (the process
 * launcher), and the processes that ran and ended in it (git, sha256sum: reaped by the launcher).
 */
export type TTreeCpu = { root: number; helpers: number; ended: number };

export async function cpuOfTree(pid: number): Promise<TTreeCpu> {
  const root = await cpuOf(pid);
  const below = await Promise.all(listDescendants(pid).map((one) => cpuOf(one).catch(() => ({ own: 0, reaped: 0 }))));
  return {
    root: root.own,
    helpers: below.reduce((sum, b) => sum + b.own, 0),
    ended: root.reaped + below.reduce((sum, b) => sum + b.reaped, 0),
  };
}

export type TWorker = { child: ChildProcess; ready: Promise<void>; exited: Promise<void>; output: () => string };

export function startWorker(env: Record<string, string>): TWorker {
  // Node with tsx's loader in-process: the pid is the worker itself, for /proc.
  // BENCH_WORKER_CPU_PROF=DIR: each worker writes a V8 CPU profile there when it exits (where its CPU goes).
  const profile = process.env.BENCH_WORKER_CPU_PROF
    ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_WORKER_CPU_PROF}`]
    : [];
  const child = spawn(
    process.execPath,
    [...profile, "--import", "tsx", path.join(PROJECT_ROOT, "scripts", "worker.ts")],
    {
      cwd: PROJECT_ROOT,
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  const collect = (d: Buffer) => {
    output = (output + d.toString()).slice(-50_000);
    if (output.includes("worker started")) markReady();
  };
  child.stdout!.on("data", collect);
  child.stderr!.on("data", collect);
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  return { child, ready, exited, output: () => output };
}
