/**
 * Test support for restart tests: a real worker process (scripts/worker.ts) against a lifecycle
 * world (the one way tests start a worker), optionally told to SIGKILL itself at a crash point, and a poll for a task state. One
 * process (`node --import tsx`), not tsx's CLI, which runs the script in a second process that a
 * SIGKILL of the first would leave running. Not used by production code.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterAll } from "vitest";
import { PROJECT_ROOT } from "../../project-root";
import type { LifecycleWorld } from "./lifecycle-fixture";

export type TWorkerProcess = {
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  output: () => string;
};

const running = new Set<ChildProcess>();
afterAll(() => {
  for (const child of running) child.kill("SIGKILL");
});

export type TWorkerProcessOptions = {
  /** The world whose database, data dir, substrate port and token file the worker uses. */
  world: LifecycleWorld;
  /** A crash point (`SCHOOLCORE_FAULT_CRASH_AFTER`) at which the worker SIGKILLs itself. */
  crashAfter?: string;
};

export function startWorkerProcess({ world, crashAfter }: TWorkerProcessOptions): TWorkerProcess {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(PROJECT_ROOT, "scripts", "worker.ts")], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      NODE_ENV: "test",
      DATABASE_URL: world.databaseUrl,
      DATA_DIR: world.env.dataDir,
      LOCAL_SUBSTRATE_PORT: String(world.env.LOCAL_SUBSTRATE_PORT),
      SMOLCLOUD_TOKEN_FILE: world.tokenFile,
      SCHOOLCORE_FAULT_CRASH_AFTER: crashAfter ?? "",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  return { child, exited, output: () => output };
}

export async function stopWorkerProcess(worker: TWorkerProcess): Promise<void> {
  worker.child.kill("SIGTERM");
  await worker.exited;
}

export async function waitForTaskState(world: LifecycleWorld, taskId: string, states: string[], timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const task = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
    if (states.includes(task.state)) return task;
    await new Promise((r) => setTimeout(r, 250));
  }
  const task = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
  throw new Error(`task ${taskId} is ${task.state}, not one of ${states.join(", ")}, after ${timeoutMs} ms`);
}
