/**
 * The worker: registers every job handler on pg-boss, keeps the heartbeat going, starts a job as
 * soon as its work is notified ready (a task, a bundle build, a qualification run:
 * lib/jobs/listen-work-ready.ts), and runs the recovery sweep: queued tasks are dispatched while
 * the gate is open, every task in a worker-owned state without a running job is resumed, queued
 * builds and runs are sent (on start, every few seconds, and after the listener reconnects) — it
 * only recovers what the notifications missed, and starts builds that waited for a machine slot.
 * It also sends the notification outbox (lib/notifications) on its own timer, so a slow mail
 * server or webhook receiver never delays a task.
 * Returns a stop function that finishes in-flight jobs (graceful) and closes the queue.
 */
import { hostname } from "node:os";
import pg from "pg";
import type { PgBoss } from "pg-boss";
import type { Db } from "../db/client";
import { getEnv, type TEnv } from "../env";
import { advanceTask, LIFECYCLE_STEPS, type TaskSteps } from "./advance-task";
import { sweepMachines } from "../machines/sweep-machines";
import type { TaskRunContext } from "../tasks/task-run-context";
import { logError, logInfo } from "../log";
import { listDuePublications } from "../publish/list-due-publications";
import { createSubstrate } from "../machines/create-substrate";
import type { Substrate } from "../substrate/substrate";
import { createBoss } from "./boss";
import { HEARTBEAT_INTERVAL_MS, recordHeartbeat } from "./heartbeat";
import { JOBS } from "./job-names";
import { closeAbandonedProbeRuns } from "../probes/close-abandoned-probe-runs";
import { isDispatchOpen } from "../probes/read-dispatch-gate";
import { runProbeJob } from "./run-probe-job";
import type { TWorkReady } from "../db/work-ready";
import { listenForReadyWork } from "./listen-work-ready";
import { withTaskLock } from "./task-lock";
import { pickTaskToDrive } from "./pick-task-to-drive";
import { listDueAutomaticRetries, retryTask } from "../lifecycle/retry-task";
import { failAbandonedBuildRequests } from "../dependencies/bundle-build-requests";
import { runBundleBuildRequest } from "../dependencies/run-bundle-build-request";
import { failAbandonedSetupRuns } from "../dependencies/fail-abandoned-setup-runs";
import { listQueuedRuns } from "../runs/run-queue";
import { sendDueNotifications } from "../notifications/send-due-notifications";
import { createSmtpMailer } from "../notifications/smtp-mailer";
import { stopProcessLauncher } from "../system/process-launcher";

export type WorkerHandle = { workerId: string; boss: PgBoss; stop(): Promise<void> };

export type WorkerOptions = {
  db: Db;
  databaseUrl: string;
  env?: TEnv;
  substrate?: Substrate;
  steps?: TaskSteps;
  sweepIntervalMs?: number;
  pollIntervalMs?: number;
  readyTimeoutMs?: number;
  /** how often the notification outbox is sent (default 2 s) */
  notificationIntervalMs?: number;
};

export async function startWorker(options: WorkerOptions): Promise<WorkerHandle> {
  const { db } = options;
  const env = options.env ?? getEnv();
  const steps = options.steps ?? LIFECYCLE_STEPS;
  const workerId = `${hostname()}:${process.pid}`;
  const startedAt = new Date();
  const lockPool = new pg.Pool({ connectionString: options.databaseUrl, max: 8 });
  const ctx: TaskRunContext = {
    db,
    env,
    substrate: options.substrate ?? createSubstrate({ db, env }),
    pollIntervalMs: options.pollIntervalMs ?? 500,
    readyTimeoutMs: options.readyTimeoutMs ?? 120_000,
  };
  const boss = createBoss(options.databaseUrl);
  boss.on("error", (error) => logError("pg-boss error", error));
  await boss.start();

  await boss.createQueue(JOBS.heartbeat.name, { retryLimit: 0, expireInSeconds: 30, deleteAfterSeconds: 300 });
  await boss.work(JOBS.heartbeat.name, { pollingIntervalSeconds: 1 }, async (jobs) => {
    for (const job of jobs) {
      JOBS.heartbeat.schema.parse(job.data);
      await recordHeartbeat(db, workerId, startedAt, new Date(), env.SCHOOLCORE_RESTART_COUNT);
    }
  });

  // At most one queued job per task (policy "short" + singletonKey). Mutual exclusion is the
  // per-task advisory lock, not the queue: a job whose worker was killed still looks active until
  // its heartbeat lapses, yet the lock died with that worker's connection, so the next sweep's job
  // resumes the task at once.
  await boss.createQueue(JOBS.advanceTask.name, {
    policy: "short",
    retryLimit: 2,
    retryDelay: 5,
    expireInSeconds: 8 * 3600,
    heartbeatSeconds: 10,
    deleteAfterSeconds: 3600,
  });
  const advanceWorkerId = await boss.work(
    JOBS.advanceTask.name,
    { pollingIntervalSeconds: 1, batchSize: 1, localConcurrency: 4 },
    async (jobs) => {
      for (const job of jobs) {
        const { taskId } = JOBS.advanceTask.schema.parse(job.data);
        // A queued task's job admits the next task in fair order under the machine cap (maybe another one).
        const drivenId = await pickTaskToDrive(ctx, { taskId });
        if (drivenId) await withTaskLock(lockPool, `task:${drivenId}`, () => advanceTask(ctx, drivenId, steps));
      }
    },
  );

  // Qualification runs (lib/probes): one job per run; a worker killed mid-run leaves the run
  // `running` with a lapsing heartbeat, and the sweep below fails it — it never shows "passed".
  await boss.createQueue(JOBS.runProbes.name, {
    policy: "short",
    retryLimit: 0,
    expireInSeconds: 3600,
    deleteAfterSeconds: 3600,
  });
  const probeWorkerId = await boss.work(
    JOBS.runProbes.name,
    { pollingIntervalSeconds: 1, batchSize: 1, localConcurrency: 1 },
    async (jobs) => {
      for (const job of jobs) {
        const { runId } = JOBS.runProbes.schema.parse(job.data);
        await runProbeJob(ctx, runId).catch((error) => logError("probe run failed", error, { runId }));
      }
    },
  );
  const sweepProbeRuns = async () => {
    // fails runs whose runner died, and the tasks and machines they left behind
    await closeAbandonedProbeRuns(ctx);
    for (const runId of await listQueuedRuns(db, "probe-run")) {
      await boss.send(JOBS.runProbes.name, { runId }, { singletonKey: runId });
    }
  };

  // Operators' bundle builds (lib/dependencies/bundle-build-requests.ts): one job per queued
  // request; a request waiting for a machine slot is sent again by each sweep and starts once one frees.
  await boss.createQueue(JOBS.buildBundle.name, {
    policy: "short",
    retryLimit: 0,
    expireInSeconds: 3600,
    deleteAfterSeconds: 3600,
  });
  const buildWorkerId = await boss.work(
    JOBS.buildBundle.name,
    { pollingIntervalSeconds: 1, batchSize: 1, localConcurrency: 2 },
    async (jobs) => {
      for (const job of jobs) {
        const { requestId } = JOBS.buildBundle.schema.parse(job.data);
        await runBundleBuildRequest(ctx, requestId).catch((error) =>
          logError("bundle build request failed", error, { requestId }),
        );
      }
    },
  );
  const sweepBuilds = async () => {
    // runs and requests whose process died are failed (their builders are then reaped by the machine sweep)
    await failAbandonedSetupRuns(db);
    await failAbandonedBuildRequests(db);
    for (const requestId of await listQueuedRuns(db, "bundle-build")) {
      await boss.send(JOBS.buildBundle.name, { requestId }, { singletonKey: requestId });
    }
  };

  const sweepTasks = async () => {
    // Automatic retries of transient provider errors that are due become new attempts (queued).
    for (const taskId of await listDueAutomaticRetries({ db }, { now: new Date(), take: 50 })) {
      await retryTask({ db }, { taskId, reason: "transient provider error", actor: null, isAutomatic: true }).catch(
        (error) => logError("automatic retry failed", error, { taskId }),
      );
    }
    await sweepProbeRuns().catch((error) => logError("probe run sweep failed", error));
    await sweepBuilds().catch((error) => logError("bundle build sweep failed", error));
    // The gate is re-proved here (and again before each provisioning in advanceTask).
    const isDispatchEnabled = await isDispatchOpen(db, env);
    // pr_pending waits for its backoff (nextAttemptAt); everything else runs as soon as it can.
    const states = Object.keys(steps).filter(
      (s) => (s !== "queued" || isDispatchEnabled) && s !== "pr_pending",
    ) as (keyof TaskSteps)[];
    // A qualification probe's tasks are driven by its own run, never by this sweep.
    const tasks = await db.task.findMany({
      where: { state: { in: states }, probeRunId: null },
      select: { id: true },
      orderBy: { createdAt: "asc" },
      take: 200,
    });
    const due = steps.pr_pending ? await listDuePublications({ db }, { take: 100 }) : [];
    for (const taskId of new Set([...tasks.map((t) => t.id), ...due])) {
      await boss.send(JOBS.advanceTask.name, { taskId }, { singletonKey: taskId });
    }
  };

  const sendHeartbeat = () =>
    boss
      .send(JOBS.heartbeat.name, { sentAt: new Date().toISOString() }, { singletonKey: workerId, singletonSeconds: 5 })
      .catch((error) => logError("heartbeat send failed", error));
  await sendHeartbeat();
  // Event-driven dispatch (lib/db/work-ready.ts): work made ready in a committed transaction (a
  // task, an operator's bundle build or qualification run) is enqueued at once and its job worker
  // woken, instead of waiting for the sweep.
  const dispatchNow = async (work: TWorkReady) => {
    if (work.kind === "task") {
      await boss.send(JOBS.advanceTask.name, { taskId: work.id }, { singletonKey: work.id });
      boss.notifyWorker(advanceWorkerId);
    } else if (work.kind === "bundle-build") {
      await boss.send(JOBS.buildBundle.name, { requestId: work.id }, { singletonKey: work.id });
      boss.notifyWorker(buildWorkerId);
    } else {
      await boss.send(JOBS.runProbes.name, { runId: work.id }, { singletonKey: work.id });
      boss.notifyWorker(probeWorkerId);
    }
  };
  const readyListener = await listenForReadyWork({
    databaseUrl: options.databaseUrl,
    onReady: (work) =>
      void dispatchNow(work).catch((error) => logError("work-ready dispatch failed", error, { ...work })),
    onReconnect: () => void sweepTasks().catch((error) => logError("task sweep failed", error)),
  });
  await sweepTasks().catch((error) => logError("task sweep failed", error));
  const heartbeatTimer = setInterval(sendHeartbeat, HEARTBEAT_INTERVAL_MS);
  let isSweeping = false;
  const sweepTimer = setInterval(() => {
    if (isSweeping) return;
    isSweeping = true;
    sweepTasks()
      .catch((error) => logError("task sweep failed", error))
      .finally(() => (isSweeping = false));
  }, options.sweepIntervalMs ?? 2000);
  const mailer = createSmtpMailer(env);
  let notificationRun: Promise<void> | null = null;
  const notificationTimer = setInterval(() => {
    notificationRun ??= sendDueNotifications({ db, env, mailer })
      .then(() => undefined)
      .catch((error) => logError("notification send failed", error))
      .finally(() => (notificationRun = null));
  }, options.notificationIntervalMs ?? 2000);
  const machineTimer = setInterval(
    () => void sweepMachines(ctx).catch((error) => logError("machine sweep failed", error)),
    60_000,
  );
  logInfo("worker started", { workerId, substrate: ctx.substrate.label });

  let stopping: Promise<void> | undefined;
  return {
    workerId,
    boss,
    stop: () =>
      (stopping ??= (async () => {
        clearInterval(heartbeatTimer);
        clearInterval(sweepTimer);
        clearInterval(machineTimer);
        clearInterval(notificationTimer);
        await notificationRun;
        mailer?.close();
        await readyListener.close();
        await boss.stop({ graceful: true, timeout: 20_000, close: true });
        await lockPool.end();
        await (ctx.substrate as { close?: () => Promise<void> }).close?.();
        await stopProcessLauncher();
        logInfo("worker stopped", { workerId });
      })()),
  };
}
