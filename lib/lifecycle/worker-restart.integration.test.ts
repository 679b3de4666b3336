/**
 * The worker process killed with SIGKILL right after each transition commit, then restarted:
 * the task resumes (or fails visibly), no second machine is created, and nothing is left live at
 * the provider. Real worker processes (scripts/worker.ts), real pg-boss, real local substrate.
 */
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PROJECT_ROOT } from "../project-root";
import { createLifecycleWorld, type LifecycleWorld } from "./testing/lifecycle-fixture";

let world: LifecycleWorld;
const running = new Set<ChildProcess>();

function startWorker(crashAfter?: string): { child: ChildProcess; exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>; output: () => string } {
  const child = spawn(process.execPath, [path.join(PROJECT_ROOT, "node_modules", "tsx", "dist", "cli.mjs"), path.join(PROJECT_ROOT, "scripts", "worker.ts")], {
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

async function waitForState(taskId: string, states: string[], timeoutMs: number) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const task = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
    if (states.includes(task.state)) return task;
    await new Promise((r) => setTimeout(r, 250));
  }
  const task = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
  throw new Error(`task ${taskId} is ${task.state}, not one of ${states.join(", ")}, after ${timeoutMs} ms`);
}

beforeAll(async () => {
  world = await createLifecycleWorld();
});

afterAll(async () => {
  for (const child of running) child.kill("SIGKILL");
});

const CRASH_POINTS = ["provisioning", "machine:requested", "machine:created", "machine:started", "machine:ready", "running", "collecting", "machine:exported", "imported", "verifying", "review_pending"];

describe("worker killed right after a transition commit", () => {
  it.each(CRASH_POINTS)("after %s: resumes to review with one student machine and nothing live", async (point) => {
    const taskId = await world.createDemoTask();
    const crashing = startWorker(point);
    const ended = await Promise.race([crashing.exited, new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 90_000))]);
    expect(ended, crashing.output().slice(-2000)).not.toBe("timeout");
    // tsx runs the worker in a child and reports its SIGKILL as exit code 137
    const { code, signal } = ended as { code: number | null; signal: string | null };
    expect(signal === "SIGKILL" || code === 137, `exit ${code} ${signal}`).toBe(true);
    expect(crashing.output()).toContain(`crash point ${point} reached`);

    const worker = startWorker();
    try {
      const task = await waitForState(taskId, ["review_pending", "failed", "blocked"], 90_000);
      expect(task.state, `${task.errorCode}: ${task.errorSummary}`).toBe("review_pending");
    } finally {
      worker.child.kill("SIGTERM");
      await worker.exited;
    }
    const machines = await world.db.guestMachine.findMany({ where: { taskId, purpose: "student" } });
    expect(machines).toHaveLength(1);
    expect(machines[0]!.state).toBe("destroyed");
    const transitions = await world.db.taskTransition.findMany({ where: { taskId }, orderBy: { id: "asc" } });
    expect(transitions.map((t) => t.toState)).toEqual(["queued", "provisioning", "running", "collecting", "imported", "verifying", "review_pending"]);
    const verifiers = await world.db.guestMachine.findMany({ where: { taskId, purpose: "verifier" } });
    for (const v of verifiers) expect(v.state).toBe("destroyed");
    expect(await world.db.verificationEvidence.count({ where: { taskId } })).toBe(1);
    expect(await world.liveAtProvider()).toBe(0);
  });
});
