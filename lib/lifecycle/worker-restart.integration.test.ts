/**
 * The worker process killed with SIGKILL right after each transition commit, then restarted:
 * the task resumes (or fails visibly), no second machine is created, and nothing is left live at
 * the provider. Real worker processes (scripts/worker.ts), real pg-boss, real local substrate.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createLifecycleWorld, type LifecycleWorld } from "./testing/lifecycle-fixture";
import { startWorkerProcess, stopWorkerProcess, waitForTaskState } from "./testing/worker-process";

let world: LifecycleWorld;

beforeAll(async () => {
  world = await createLifecycleWorld();
});

const CRASH_POINTS = [
  "provisioning",
  "machine:requested",
  "machine:created",
  "machine:started",
  "machine:ready",
  "running",
  "collecting",
  "machine:exported",
  "imported",
  "verifying",
  "review_pending",
];

describe("worker killed right after a transition commit", () => {
  it.each(CRASH_POINTS)("after %s: resumes to review with one student machine and nothing live", async (point) => {
    const taskId = await world.createDemoTask();
    const crashing = startWorkerProcess({ world, crashAfter: point });
    const ended = await Promise.race([
      crashing.exited,
      new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 90_000)),
    ]);
    expect(ended, crashing.output().slice(-2000)).not.toBe("timeout");
    const { code, signal } = ended as { code: number | null; signal: string | null };
    expect(signal === "SIGKILL" || code === 137, `exit ${code} ${signal}`).toBe(true);
    expect(crashing.output()).toContain(`crash point ${point} reached`);

    const worker = startWorkerProcess({ world });
    try {
      const task = await waitForTaskState(world, taskId, ["review_pending", "failed", "blocked"], 90_000);
      expect(task.state, `${task.errorCode}: ${task.errorSummary}`).toBe("review_pending");
    } finally {
      await stopWorkerProcess(worker);
    }
    const machines = await world.db.guestMachine.findMany({ where: { taskId, purpose: "student" } });
    expect(machines).toHaveLength(1);
    expect(machines[0]!.state).toBe("destroyed");
    const transitions = await world.db.taskTransition.findMany({ where: { taskId }, orderBy: { id: "asc" } });
    expect(transitions.map((t) => t.toState)).toEqual([
      "queued",
      "provisioning",
      "running",
      "collecting",
      "imported",
      "verifying",
      "review_pending",
    ]);
    const verifiers = await world.db.guestMachine.findMany({ where: { taskId, purpose: "verifier" } });
    for (const v of verifiers) expect(v.state).toBe("destroyed");
    expect(await world.db.verificationEvidence.count({ where: { taskId } })).toBe(1);
    expect(await world.liveAtProvider()).toBe(0);
  });
});
