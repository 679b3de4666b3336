/**
 * A probe run whose worker is SIGKILLed mid-run ends visibly failed — and so do the tasks it
 * created: each probe task left mid-lifecycle is failed with a reason naming the abandoned run, its
 * machines are destroyed (observed gone at the provider), or quarantined when the destroy fails.
 * The worker is the real process (`scripts/worker.ts`); the local substrate keeps running in this
 * test process, as a provider would, so the dead worker's guests are really still there.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { createLifecycleWorld, type LifecycleWorld } from "../lifecycle/testing/lifecycle-fixture";
import { startWorkerProcess } from "../lifecycle/testing/worker-process";
import { LIVE_MACHINE_STATES } from "../machines/machine-states";
import { closeAbandonedProbeRuns } from "./close-abandoned-probe-runs";
import { getProbeRunOrThrow } from "./probe-run.repo";
import { requestProbeRun } from "./request-probe-run";
import { RUN_HEARTBEAT_STALE_MS } from "../runs/run-states";

let world: LifecycleWorld;

beforeAll(async () => {
  world = await createLifecycleWorld();
});

/** Starts a real worker on P1 and SIGKILLs it as soon as the probe task's guest is live at the provider. */
async function killWorkerMidTask(): Promise<{ runId: string; taskId: string }> {
  const run = await requestProbeRun(
    { db: world.db, env: world.env },
    { probes: ["P1"], actor: null, isRunByCaller: true },
  );
  const worker = startWorkerProcess({ world });
  try {
    const deadline = Date.now() + 90_000;
    while (Date.now() < deadline) {
      const live = await world.db.guestMachine.findFirst({
        where: { task: { probeRunId: run.id }, state: { in: ["started", "ready"] }, providerId: { not: null } },
        select: { taskId: true },
      });
      if (live) return { runId: run.id, taskId: live.taskId! };
      if (worker.child.exitCode !== null) throw new Error(`the worker exited with ${worker.child.exitCode}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error("the probe task's guest never came up");
  } finally {
    worker.child.kill("SIGKILL");
    await worker.exited;
  }
}

const sweepLater = () =>
  closeAbandonedProbeRuns(
    { db: world.db, env: world.env, substrate: world.ctx.substrate },
    { now: new Date(Date.now() + RUN_HEARTBEAT_STALE_MS + 5_000) },
  );

describe("a probe run whose worker is killed mid-task", () => {
  it("fails the run and its tasks, naming the run, and destroys the tasks' machines", async () => {
    const { runId, taskId } = await killWorkerMidTask();
    expect(await world.liveAtProvider()).toBeGreaterThan(0);
    const before = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
    expect(["provisioning", "running", "collecting"]).toContain(before.state);

    const result = await sweepLater();
    expect(result.failedRuns).toContain(runId);
    expect(result.failedTasks).toEqual([taskId]);
    expect((await getProbeRunOrThrow({ db: world.db }, { runId: runId })).state).toBe("failed");
    const task = await world.db.task.findUniqueOrThrow({
      where: { id: taskId },
      include: { machines: true, capabilities: true },
    });
    expect(task.state).toBe("failed");
    expect(task.errorCode).toBe("PROBE_RUN_ABANDONED");
    expect(task.errorSummary).toContain(runId);
    expect(task.machines.filter((m) => (LIVE_MACHINE_STATES as readonly string[]).includes(m.state))).toEqual([]);
    expect(task.machines.some((m) => m.state === "destroyed")).toBe(true);
    for (const c of task.capabilities) expect(c.revokedAt).not.toBeNull();
    expect(await world.liveAtProvider()).toBe(0);
    // idempotent: a second sweep finds nothing left to do
    expect(await sweepLater()).toEqual({ failedRuns: [], failedTasks: [], quarantinedMachines: [] });
  }, 150_000);

  it("quarantines a machine whose destroy fails, and says so in the task's reason", async () => {
    const { runId, taskId } = await killWorkerMidTask();
    const armed = await world.substrate.admin("POST", "/admin/faults", { verb: "delete", kind: "http500", count: 50 });
    expect(armed.status).toBeLessThan(300);
    try {
      const result = await sweepLater();
      expect(result.failedTasks).toEqual([taskId]);
      expect(result.quarantinedMachines.length).toBeGreaterThan(0);
      const task = await world.db.task.findUniqueOrThrow({ where: { id: taskId }, include: { machines: true } });
      expect(task.state).toBe("failed");
      expect(task.errorSummary).toMatch(new RegExp(`${runId}.*quarantined after a failed destroy`));
      expect(task.machines.filter((m) => m.state === "cleanup_quarantined").length).toBeGreaterThan(0);
    } finally {
      await world.substrate.admin("DELETE", "/admin/faults");
    }
    // cleared by hand, as an operator would after looking: the test leaves nothing running
    for (const m of await world.db.guestMachine.findMany({
      where: { task: { probeRunId: runId }, state: "cleanup_quarantined" },
    }))
      await world.ctx.substrate.destroy(m.providerId!);
    expect(await world.liveAtProvider()).toBe(0);
  }, 150_000);
});
