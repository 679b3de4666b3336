/**
 * Dispatch without waiting (issue 16, item 2; issue 29): a created task, a teacher's approval, and
 * an operator's qualification run, are picked up through the work-ready notification, not the sweep. The worker's sweep
 * interval is an hour and both are made after the worker's start-up sweep, so only the
 * notification can start their jobs.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { Substrate } from "../substrate/substrate";
import { createLifecycleWorld, decideRoundOneCandidate } from "../lifecycle/testing/lifecycle-fixture";
import { advanceTask } from "./advance-task";
import { requestProbeRun } from "../probes/request-probe-run";
import { startWorker, type WorkerHandle } from "./start-worker";

describe("event-driven dispatch", async () => {
  const world = await createLifecycleWorld();
  let worker: WorkerHandle | undefined;
  /** the tasks whose `approved` step the worker ran, and when */
  const approvedSteps = new Map<string, number>();
  afterAll(async () => {
    await worker?.stop();
  });

  it(
    "a created task is admitted (queued → provisioning) through the notification, with the sweep an hour away",
    { timeout: 60_000 },
    async () => {
      // The world closes its substrate itself; the worker's stop must not close it first.
      const substrate = new Proxy(world.ctx.substrate, {
        get: (target, key) => (key === "close" ? undefined : Reflect.get(target, key)),
      }) as Substrate;
      // Admission (the job's own queued → provisioning) and a recording `approved` step are all
      // that run — the tests are about who starts the job, not the student run or publication.
      worker = await startWorker({
        db: world.db,
        databaseUrl: world.databaseUrl,
        env: world.env,
        substrate,
        sweepIntervalMs: 3_600_000,
        steps: { approved: async (_ctx, task) => void approvedSteps.set(task.id, Date.now()) },
      });
      const taskId = await world.createDemoTask();
      await expect
        .poll(async () => (await world.db.task.findUniqueOrThrow({ where: { id: taskId } })).state, {
          timeout: 15_000,
          interval: 50,
        })
        .toBe("provisioning");
      const transitions = await world.db.taskTransition.findMany({ where: { taskId }, orderBy: { createdAt: "asc" } });
      expect(transitions.map((t) => t.toState)).toEqual(["queued", "provisioning"]);
      // Reported, not asserted (benchmarks are not tests): creation → provisioning.
      process.stdout.write(
        `work-ready dispatch: queued → provisioning in ${transitions[1]!.createdAt.getTime() - transitions[0]!.createdAt.getTime()} ms\n`,
      );
    },
  );

  it(
    "a teacher's approval reaches the worker's publication step through the notification, with the sweep an hour away",
    { timeout: 120_000 },
    async () => {
      // The test drives the task to review itself (the worker above has no student steps).
      const taskId = await world.createDemoTask();
      await advanceTask(world.ctx, taskId);
      expect((await world.db.task.findUniqueOrThrow({ where: { id: taskId } })).state).toBe("review_pending");
      const teacher = await world.db.user.create({
        data: { email: "t@dispatch.test", name: "T", roles: ["teacher"], passwordHash: "x" },
      });
      await decideRoundOneCandidate(world, {
        taskId,
        actor: { userId: teacher.id, email: teacher.email, roles: ["teacher"] },
        verdict: "approve",
        comment: "ship it",
      });
      await expect.poll(() => approvedSteps.has(taskId), { timeout: 15_000, interval: 20 }).toBe(true);
      const approved = await world.db.taskTransition.findFirstOrThrow({ where: { taskId, toState: "approved" } });
      process.stdout.write(
        `work-ready dispatch: approved → publication step in ${approvedSteps.get(taskId)! - approved.createdAt.getTime()} ms\n`,
      );
    },
  );

  it(
    "an operator's qualification run is started by the worker through the notification, with the sweep an hour away",
    { timeout: 60_000 },
    async () => {
      // The same worker, started above after its start-up sweep: only the notification can start this run.
      const run = await requestProbeRun({ db: world.db, env: world.env }, { probes: ["P0"], actor: null });
      await expect
        .poll(async () => (await world.db.probeRun.findUniqueOrThrow({ where: { id: run.id } })).state, {
          timeout: 30_000,
          interval: 100,
        })
        .not.toBe("queued");
      const started = await world.db.probeRun.findUniqueOrThrow({ where: { id: run.id } });
      expect(started.startedAt).not.toBeNull();
      process.stdout.write(
        `work-ready dispatch: probe run queued → ${started.state} in ${started.startedAt!.getTime() - started.createdAt.getTime()} ms\n`,
      );
      // Let it end before the worker stops (P0 reads the provider account only).
      await expect
        .poll(async () => (await world.db.probeRun.findUniqueOrThrow({ where: { id: run.id } })).state, {
          timeout: 30_000,
          interval: 200,
        })
        .toMatch(/^(passed|failed)$/);
    },
  );
});
