/**
 * The worker killed (SIGKILL) inside verification, after the checks' evidence was committed and
 * after the verifier guest was destroyed: the restarted worker finishes from the recorded evidence
 * — one verifier guest per attempt, one evidence row, no check run twice — instead of re-running
 * the checks on a second verifier (seen in lib/jobs/two-workers.integration.test.ts under load: a
 * task reaching review with two verifier machines).
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createLifecycleWorld, type LifecycleWorld } from "../lifecycle/testing/lifecycle-fixture";
import { startWorkerProcess, stopWorkerProcess, waitForTaskState } from "../lifecycle/testing/worker-process";

let world: LifecycleWorld;

beforeAll(async () => {
  world = await createLifecycleWorld();
});

describe("worker killed inside verification", () => {
  it.each(["machine:verifier_evidence", "machine:verifier_destroyed"])(
    "after %s: resumes to review with one verifier machine and one evidence",
    async (point) => {
      const taskId = await world.createDemoTask();
      const crashing = startWorkerProcess({ world, crashAfter: point });
      const ended = await Promise.race([
        crashing.exited,
        new Promise<"timeout">((r) => setTimeout(() => r("timeout"), 90_000)),
      ]);
      expect(ended, crashing.output().slice(-2000)).not.toBe("timeout");
      expect(crashing.output()).toContain(`crash point ${point} reached`);

      const worker = startWorkerProcess({ world });
      try {
        const task = await waitForTaskState(world, taskId, ["review_pending", "failed", "blocked"], 90_000);
        expect(task.state, `${task.errorCode}: ${task.errorSummary}`).toBe("review_pending");
      } finally {
        await stopWorkerProcess(worker);
      }
      const verifiers = await world.db.guestMachine.findMany({
        where: { taskId, purpose: "verifier" },
        include: { transitions: true },
      });
      expect(
        verifiers.length,
        JSON.stringify(
          verifiers.map((v) => ({ id: v.id, state: v.state, transitions: v.transitions.map((t) => t.toState) })),
        ),
      ).toBe(1);
      expect(verifiers[0]!.state).toBe("destroyed");
      const evidence = await world.db.verificationEvidence.findMany({ where: { taskId } });
      expect(evidence).toHaveLength(1);
      expect(evidence[0]!.machineId).toBe(verifiers[0]!.id);
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
      expect(await world.liveAtProvider()).toBe(0);
    },
  );
});
