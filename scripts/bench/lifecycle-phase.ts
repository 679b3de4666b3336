/**
 * One phase of the lifecycle bench: with N real worker processes, create the demo tasks (all at
 * once, or one after the other), wait until each is at rest, have the teacher approve each that
 * reached review, and read from the transition log and /proc where the time and the CPU went.
 */
import type { Db } from "../../lib/db/client";
import { DEMO_ISSUE, DEMO_REPOSITORY } from "../../lib/demo/demo-target";
import { parseEnv } from "../../lib/env";
import { createTask } from "../../lib/tasks/create-task";
import { msPerState } from "../../lib/tasks/task-stages";
import { approveEachToPr, type TPublicationBench } from "./approve-to-pr";
import { percentile } from "./bench-report";
import { cpuOfTree, startWorker, type TTreeCpu } from "./bench-worker-process";

const RESTING = ["review_pending", "failed", "blocked"] as const;
/** The student pipeline's states, in order, then publication's: the stage table's rows. */
const STAGES = [
  "queued",
  "provisioning",
  "running",
  "collecting",
  "imported",
  "verifying",
  "approved",
  "pr_pending",
] as const;

export type TPhase = {
  workers: number;
  tasks: number;
  wallSeconds: number;
  tasksPerMinute: number;
  reviewP50: number;
  reviewP95: number;
  guestP50: number;
  /** seconds in each state of the pipeline, p50 and p95 */
  stages: { state: string; p50: number; p95: number }[];
  cpuPerTask: number;
  /** where cpuPerTask went: the worker processes, their launchers, and the git they ran */
  cpuSplitPerTask: TTreeCpu;
  errors: number;
  errorSamples: string[];
  /** approve → pull request open, p50 / p95 seconds, over the tasks approved */
  approveP50: number;
  approveP95: number;
  approved: number;
  machinesLeft: number;
  timedOut: boolean;
};

export async function runPhase(
  db: Db,
  options: {
    workers: number;
    /** how many demo tasks, and whether one after the other instead of all at once */
    tasks: number;
    isSequential: boolean;
    /** the phase stops waiting (and reports it timed out) after this long */
    timeoutMs: number;
    env: Record<string, string>;
    createEnv: ReturnType<typeof parseEnv>;
    liveAtProvider: () => Promise<number>;
    publication: TPublicationBench;
  },
): Promise<TPhase> {
  const { tasks: taskCount, isSequential, timeoutMs } = options;
  const workers = Array.from({ length: options.workers }, () => startWorker(options.env));
  await Promise.all(workers.map((w) => w.ready));
  const taskIds: string[] = [];
  const createOne = async (into = taskIds) => {
    const task = await createTask(
      { db, env: options.createEnv },
      {
        repository: DEMO_REPOSITORY,
        issueNumber: DEMO_ISSUE.number,
        issueTitle: DEMO_ISSUE.title,
        prompt: DEMO_ISSUE.body,
        actor: null,
      },
    );
    into.push(task.id);
  };
  // One at a time, the worker first runs one task that is not counted: a worker that has been up
  // a while has compiled its code and loaded its modules, which a fresh one does on its first task
  // (at 8 tasks that start-up would be an eighth of each task's CPU).
  if (isSequential) {
    const warmUp: string[] = [];
    await createOne(warmUp);
    const until = Date.now() + 120_000;
    while (Date.now() < until && (await db.task.count({ where: { id: warmUp[0], state: { in: [...RESTING] } } })) === 0)
      await new Promise((r) => setTimeout(r, 100));
  }
  const cpuBefore = await Promise.all(workers.map((w) => cpuOfTree(w.child.pid!)));
  const started = Date.now();
  if (!isSequential) {
    for (let i = 0; i < taskCount; i++) await createOne();
    process.stderr.write(`  ${taskCount} tasks created in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  } else await createOne();
  let timedOut = false;
  let lastReport = 0;
  for (;;) {
    const resting = await db.task.count({ where: { id: { in: taskIds }, state: { in: [...RESTING] } } });
    // One at a time: the next task is created the moment the previous one is at rest.
    if (isSequential && resting === taskIds.length && taskIds.length < taskCount) {
      await createOne();
      continue;
    }
    if (resting === taskCount) break;
    if (Date.now() - started > timeoutMs) {
      timedOut = true;
      break;
    }
    if (Date.now() - lastReport > 15_000) {
      lastReport = Date.now();
      process.stderr.write(`  ${resting}/${taskCount} at rest after ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const cpuAfter = await Promise.all(
    workers.map((w) =>
      cpuOfTree(w.child.pid!).catch((): TTreeCpu => ({ root: Number.NaN, helpers: Number.NaN, ended: Number.NaN })),
    ),
  );
  const reviewed = await db.task.findMany({
    where: { id: { in: taskIds }, state: "review_pending" },
    select: { id: true },
  });
  const approvals = await approveEachToPr(db, {
    dataDir: options.createEnv.dataDir,
    teacher: options.publication.teacher,
    taskIds: reviewed.map((t) => t.id),
    timeoutMs: 60_000,
  });
  for (const w of workers) w.child.kill("SIGTERM");
  await Promise.all(workers.map((w) => w.exited));

  const tasks = await db.task.findMany({
    where: { id: { in: taskIds } },
    include: { transitions: { orderBy: { id: "asc" } } },
  });
  const toReview: number[] = [];
  const inGuests: number[] = [];
  // Where the time went (issue 29): per state, over the tasks that reached review.
  const stageMs = new Map<string, number[]>();
  let lastReview = started;
  for (const task of tasks) {
    const at = (state: string) => task.transitions.find((t) => t.toState === state)?.createdAt.getTime();
    const review = at("review_pending");
    if (review === undefined) continue;
    toReview.push(review - task.createdAt.getTime());
    for (const [state, ms] of msPerState(task.transitions)) stageMs.set(state, [...(stageMs.get(state) ?? []), ms]);
    lastReview = Math.max(lastReview, review);
    const [running, collecting, verifying] = [at("running"), at("collecting"), at("verifying")];
    if (running !== undefined && collecting !== undefined && verifying !== undefined)
      inGuests.push(collecting - running + (review - verifying));
  }
  // After the approvals a task that reached review is pr_open (or failed to publish: counted there).
  const failed = tasks.filter((t) => !["review_pending", "pr_open"].includes(t.state));
  const firstCreated = Math.min(...tasks.map((t) => t.createdAt.getTime()));
  const wallSeconds = (lastReview - firstCreated) / 1000;
  return {
    workers: options.workers,
    tasks: taskCount,
    wallSeconds,
    tasksPerMinute: toReview.length / (wallSeconds / 60),
    reviewP50: percentile(toReview, 0.5) / 1000,
    reviewP95: percentile(toReview, 0.95) / 1000,
    guestP50: percentile(inGuests, 0.5) / 1000,
    stages: STAGES.map((state) => ({
      state,
      p50: percentile(stageMs.get(state) ?? [], 0.5) / 1000,
      p95: percentile(stageMs.get(state) ?? [], 0.95) / 1000,
    })),
    cpuSplitPerTask: perTask(cpuBefore, cpuAfter, taskCount),
    cpuPerTask: Object.values(perTask(cpuBefore, cpuAfter, taskCount)).reduce((sum, s) => sum + s, 0),
    errors: failed.length,
    errorSamples: [
      ...new Set(failed.map((t) => `${t.state} ${t.errorCode ?? ""}: ${(t.errorSummary ?? "").slice(0, 160)}`)),
      ...approvals.failures.map((f) => `approval did not open a pull request: ${f}`),
    ].slice(0, 5),
    approveP50: percentile(approvals.spans, 0.5) / 1000,
    approveP95: percentile(approvals.spans, 0.95) / 1000,
    approved: approvals.spans.length,
    machinesLeft:
      (await options.liveAtProvider()) +
      (await db.guestMachine.count({
        where: { taskId: { in: taskIds }, state: { in: ["requested", "created", "started", "ready", "exported"] } },
      })),
    timedOut,
  };
}

function perTask(before: TTreeCpu[], after: TTreeCpu[], taskCount: number): TTreeCpu {
  const sum = (part: keyof TTreeCpu) =>
    after.reduce((total, a, i) => total + (a[part] - before[i]![part]), 0) / taskCount;
  return { root: sum("root"), helpers: sum("helpers"), ended: sum("ended") };
}
