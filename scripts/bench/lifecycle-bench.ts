/**
 * `npm run bench:lifecycle [-- --tasks N] [--workers 1,2] [--sequential]`: N demo tasks at once (or,
 * with --sequential, one after the other: latency without the tasks' own contention) through the whole
 * student pipeline on the local substrate (provisioning → the reference student agent in a real
 * bubblewrap guest, asking the scripted demo transport through the mailbox relay → collect →
 * import → trusted verification on a fresh verifier guest → review_pending), with 1 and with 2
 * real worker processes (scripts/worker.ts) on one PostgreSQL.
 *
 * Reported per worker count: tasks per minute (first creation → last review), p50/p95 time from
 * creation to review (from the transition log), the floor beside it — the p50 time the guests
 * themselves ran (running → collecting, plus verifying) — control-plane CPU per task (user + system
 * of the worker processes and the git they waited for, from /proc; the local substrate and its
 * guests run in this process and stand in for the provider, and PostgreSQL is not counted),
 * errors (tasks that ended failed or blocked) and machines left live at the provider. Then a
 * teacher approves each task that reached review, one at a time, and the approve → pull request
 * span is read from the transition log (a local forge stands in for GitHub: approve-to-pr.ts).
 * Before the phases, machine create → first command output is timed through the SmolCloud
 * adapter (first-command.ts).
 *
 * Dispatch is opened with the test fixture's recorded passing run (the probes themselves are
 * `probe run`'s business). A benchmark, not a test: it prints a table and asserts nothing.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Db } from "../../lib/db/client";
import { DEMO_ISSUE, DEMO_REPOSITORY, writeDemoRepository } from "../../lib/demo/demo-target";
import { DEMO_SCRIPTED_COMPLETIONS } from "../../lib/demo/seed-demo-environment";
import { DEMO_TRUSTED_MANIFEST } from "../../lib/contract/trusted-manifest";
import { DEFAULT_TASK_LIMITS } from "../../lib/contract/limits";
import { parseEnv } from "../../lib/env";
import { PROJECT_ROOT } from "../../lib/project-root";
import { qualifyForTests } from "../../lib/probes/testing/qualify-for-tests";
import { setRelayUpstream } from "../../lib/relay/upstream-setting";
import { addTargetRepository } from "../../lib/repos/target-repositories";
import { writeSetting } from "../../lib/settings/operator-settings";
import { createTask } from "../../lib/tasks/create-task";
import { saveTrustedManifest } from "../../lib/verify/trusted-manifests";
import { startTestSubstrate } from "../../sidecars/local-substrate/testing/local-substrate-fixture";
import { percentile, printBenchJson, row, type TBenchRow } from "./bench-report";
import { msPerState } from "../../lib/tasks/task-stages";
import { measureStageFloors, type TStageFloors } from "./stage-floors";
import { withBenchDatabase } from "./bench-database";
import { approveEachToPr, setUpPublication, type TPublicationBench } from "./approve-to-pr";
import { measureFirstCommand } from "./first-command";
import { SmolCloudSubstrate } from "../../lib/substrate/smolcloud/smolcloud-substrate";

const RESTING = ["review_pending", "failed", "blocked"] as const;
/** The student pipeline's states, in order, then publication's: the stage table's rows. */
const STAGES = ["queued", "provisioning", "running", "collecting", "imported", "verifying", "approved", "pr_pending"] as const;

function flag(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

const TASKS = Number(flag("tasks") ?? 50);
const WORKER_COUNTS = (flag("workers") ?? "1,2").split(",").map(Number);
const TIMEOUT_MS = Number(flag("timeout-minutes") ?? 30) * 60_000;
const IS_SEQUENTIAL = process.argv.includes("--sequential");
if (!Number.isInteger(TASKS) || TASKS < 1 || WORKER_COUNTS.some((n) => !Number.isInteger(n) || n < 1)) {
  process.stderr.write("usage: bench:lifecycle [-- --tasks N] [--workers 1,2] [--sequential] [--timeout-minutes 30]\n");
  process.exit(2);
}

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** utime + stime + cutime + cstime of one process, in seconds (fields 14–17 of /proc/PID/stat). */
async function cpuSeconds(pid: number): Promise<number> {
  const stat = await fs.readFile(`/proc/${pid}/stat`, "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // fields[0] is field 3 (state): field n is fields[n - 3]
  return [14, 15, 16, 17].reduce((sum, n) => sum + Number(fields[n - 3]), 0) / TICKS_PER_SECOND;
}

type TWorker = { child: ChildProcess; ready: Promise<void>; exited: Promise<void>; output: () => string };

function startWorker(env: Record<string, string>): TWorker {
  // Node with tsx's loader in-process: the pid is the worker itself, for /proc.
  const child = spawn(process.execPath, ["--import", "tsx", path.join(PROJECT_ROOT, "scripts", "worker.ts")], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
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

type TPhase = {
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
  errors: number;
  errorSamples: string[];
  /** approve → pull request open, p50 / p95 seconds, over the tasks approved */
  approveP50: number;
  approveP95: number;
  approved: number;
  machinesLeft: number;
  timedOut: boolean;
};

async function runPhase(
  db: Db,
  options: {
    workers: number;
    env: Record<string, string>;
    createEnv: ReturnType<typeof parseEnv>;
    liveAtProvider: () => Promise<number>;
    publication: TPublicationBench;
  },
): Promise<TPhase> {
  const workers = Array.from({ length: options.workers }, () => startWorker(options.env));
  await Promise.all(workers.map((w) => w.ready));
  const cpuBefore = await Promise.all(workers.map((w) => cpuSeconds(w.child.pid!)));
  const started = Date.now();
  const taskIds: string[] = [];
  const createOne = async () => {
    const task = await createTask(
      { db, env: options.createEnv },
      { repository: DEMO_REPOSITORY, issueNumber: DEMO_ISSUE.number, issueTitle: DEMO_ISSUE.title, prompt: DEMO_ISSUE.body, actorId: null },
    );
    taskIds.push(task.id);
  };
  if (!IS_SEQUENTIAL) {
    for (let i = 0; i < TASKS; i++) await createOne();
    process.stderr.write(`  ${TASKS} tasks created in ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  } else await createOne();
  let timedOut = false;
  let lastReport = 0;
  for (;;) {
    const resting = await db.task.count({ where: { id: { in: taskIds }, state: { in: [...RESTING] } } });
    // One at a time: the next task is created the moment the previous one is at rest.
    if (IS_SEQUENTIAL && resting === taskIds.length && taskIds.length < TASKS) {
      await createOne();
      continue;
    }
    if (resting === TASKS) break;
    if (Date.now() - started > TIMEOUT_MS) {
      timedOut = true;
      break;
    }
    if (Date.now() - lastReport > 15_000) {
      lastReport = Date.now();
      process.stderr.write(`  ${resting}/${TASKS} at rest after ${((Date.now() - started) / 1000).toFixed(0)} s\n`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  const cpuAfter = await Promise.all(workers.map((w) => cpuSeconds(w.child.pid!).catch(() => Number.NaN)));
  const reviewed = await db.task.findMany({ where: { id: { in: taskIds }, state: "review_pending" }, select: { id: true } });
  const approvals = await approveEachToPr(db, {
    dataDir: options.createEnv.dataDir,
    teacher: options.publication.teacher,
    taskIds: reviewed.map((t) => t.id),
    timeoutMs: 60_000,
  });
  for (const w of workers) w.child.kill("SIGTERM");
  await Promise.all(workers.map((w) => w.exited));

  const tasks = await db.task.findMany({ where: { id: { in: taskIds } }, include: { transitions: { orderBy: { id: "asc" } } } });
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
    tasks: TASKS,
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
    cpuPerTask: cpuAfter.reduce((sum, after, i) => sum + (after - cpuBefore[i]!), 0) / TASKS,
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

async function main(db: Db, databaseUrl: string): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "lifecycle-bench-"));
  await fs.chmod(dataDir, 0o755);
  const substrate = await startTestSubstrate({ readinessDelayMs: 100 });
  let stopForge = async () => undefined as void;
  try {
    const tokenFile = path.join(dataDir, "substrate-token");
    await fs.writeFile(tokenFile, substrate.token, { mode: 0o600 });
    const port = new URL(substrate.url).port;
    const createEnv = parseEnv({ DATA_DIR: dataDir, NODE_ENV: "development", LOCAL_SUBSTRATE_PORT: port, SMOLCLOUD_TOKEN_FILE: tokenFile });
    const workerEnv = {
      NODE_ENV: "development",
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      LOCAL_SUBSTRATE_PORT: port,
      SMOLCLOUD_TOKEN_FILE: tokenFile,
      LOG_LEVEL: "info",
      SCHOOLCORE_FAULT_CRASH_AFTER: "",
    };

    const demo = await writeDemoRepository(path.join(dataDir, "demo-src"));
    await addTargetRepository({ db }, { name: DEMO_REPOSITORY, cloneUrl: demo.path, actorId: null });
    const publication = await setUpPublication(db, { dataDir, repository: DEMO_REPOSITORY, sourceDir: demo.path, sha: demo.sha });
    stopForge = () => publication.forge.stop();
    await writeSetting(db, {
      key: "spend.ceilings",
      value: { globalMicros: 1_000_000_000_000, perTaskMicros: 100_000_000, monthlyGlobalMicros: null, monthlyPerTaskMicros: null },
      actorId: null,
      reason: "lifecycle bench",
    });
    // A loaded machine must not turn slowness into timeouts: the deadline is generous.
    await writeSetting(db, {
      key: "task.limits",
      value: { ...DEFAULT_TASK_LIMITS, wallClockSeconds: 900, memoryMb: 512 },
      actorId: null,
      reason: "lifecycle bench",
    });
    await setRelayUpstream({
      db,
      value: { kind: "scripted", scriptFile: DEMO_SCRIPTED_COMPLETIONS },
      reason: "lifecycle bench",
      via: "lifecycle-bench",
    });
    await saveTrustedManifest({ db }, { content: DEMO_TRUSTED_MANIFEST, actorId: null });
    await qualifyForTests(db, createEnv);
    const liveAtProvider = async () => ((await substrate.admin("GET", "/admin/machines")).json as { machineCount: number }).machineCount;
    const version = ((await db.$queryRaw<{ v: string }[]>`select current_setting('server_version') as v`)[0]?.v ?? "?").split(" ")[0];

    // Floors measured in the same run, on the same machine, before the load of the phases.
    const floors: TStageFloors = await measureStageFloors(demo.path);
    const adapter = new SmolCloudSubstrate({ baseUrl: substrate.url, tokenFile, label: "local" });
    const firstCommand = await measureFirstCommand(adapter, 10).finally(() => adapter.close());
    const phases: TPhase[] = [];
    for (const workers of WORKER_COUNTS) {
      process.stderr.write(`lifecycle bench: ${TASKS} tasks, ${workers} worker${workers === 1 ? "" : "s"} …\n`);
      phases.push(await runPhase(db, { workers, env: workerEnv, createEnv, liveAtProvider, publication }));
    }

    const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "—");
    const header = [
      "workers",
      "tasks/min",
      "p50 to review",
      "p95 to review",
      "p50 in guests",
      "approve→PR p50",
      "approve→PR p95",
      "CPU/task",
      "errors",
      "machines left",
      "wall",
    ];
    const lines = [
      `lifecycle benchmark — ${TASKS} demo tasks ${IS_SEQUENTIAL ? "one after the other" : "at once"} on the local substrate (bubblewrap guests), PostgreSQL ${version} (${process.env.DATABASE_URL ? "DATABASE_URL" : "embedded"}), Node ${process.version}, ${os.cpus().length} cores, load ${os
        .loadavg()
        .map((l) => l.toFixed(1))
        .join(" ")}`,
      "",
      header.map((h) => h.padStart(15)).join(""),
      ...phases.map((p) =>
        [
          String(p.workers),
          f(p.tasksPerMinute),
          `${f(p.reviewP50)} s`,
          `${f(p.reviewP95)} s`,
          `${f(p.guestP50)} s`,
          `${f(p.approveP50, 2)} s`,
          `${f(p.approveP95, 2)} s`,
          `${f(p.cpuPerTask, 2)} s`,
          String(p.errors),
          String(p.machinesLeft),
          `${f(p.wallSeconds, 0)} s${p.timedOut ? " (timed out)" : ""}`,
        ]
          .map((c) => c.padStart(15))
          .join(""),
      ),
      "",
      "stage table (seconds in each state, p50 / p95, tasks that reached review):",
      ...phases.map(
        (p) =>
          `  ${p.workers} worker${p.workers === 1 ? " " : "s"}  ` +
          p.stages.map((st) => `${st.state} ${f(st.p50, 2)} / ${f(st.p95, 2)}`).join("   "),
      ),
      `machine create → first command output (SmolCloud adapter on the local substrate, ${firstCommand.samples} machines one at a time): p50 ${f(firstCommand.p50Ms, 0)} ms, p95 ${f(firstCommand.p95Ms, 0)} ms`,
      `floors (p50, this machine, same run): bubblewrap spawn of true ${f(floors.bwrapTrueMs, 1)} ms; node start-up ${f(floors.nodeStartMs, 1)} ms; node --test of the demo repository ${f(floors.demoTestsMs, 0)} ms`,
      "",
      "p50 in guests: the floor — time the student guest and the verifier guest ran (from the transition log); the rest of the time to review is queueing and the control plane.",
      "CPU/task: user + system seconds of the worker processes and the git they ran, per task; the local substrate and its guests (the provider) and PostgreSQL are not counted.",
      ...phases.flatMap((p) => p.errorSamples.map((s) => `errors (${p.workers} worker${p.workers === 1 ? "" : "s"}): ${s}`)),
    ];
    process.stdout.write(lines.join("\n") + "\n");

    const rows: TBenchRow[] = [
      row(
        "machine create → first command output p50 (local substrate)",
        firstCommand.p50Ms,
        "ms",
        { label: "bubblewrap spawn of true (floor)", value: floors.bwrapTrueMs },
        "≤ 150 ms",
      ),
      row("machine create → first command output p95 (local substrate)", firstCommand.p95Ms, "ms", {
        label: "bubblewrap spawn of true (floor)",
        value: floors.bwrapTrueMs,
      }),
    ];
    const mode = IS_SEQUENTIAL ? "one at a time" : `${TASKS} at once`;
    const base = phases[0];
    for (const p of phases) {
      const label = `${p.workers} worker${p.workers === 1 ? "" : "s"}`;
      const peer =
        p === base || !base ? null : { label: `${base.workers} worker${base.workers === 1 ? "" : "s"}`, value: base.tasksPerMinute };
      rows.push(row(`lifecycle ${label}: tasks per minute (${mode})`, p.tasksPerMinute, "tasks/min", peer));
      rows.push(
        row(
          `lifecycle ${label}: p50 creation → review (${mode})`,
          p.reviewP50,
          "s",
          { label: "p50 time in guests (floor)", value: p.guestP50 },
          // the targets are for one demo task with nothing else running; 50 at once queue behind the machine cap
          IS_SEQUENTIAL ? "≤ 3.0 s" : undefined,
        ),
      );
      rows.push(
        row(
          `lifecycle ${label}: p95 creation → review (${mode})`,
          p.reviewP95,
          "s",
          { label: "p50 time in guests (floor)", value: p.guestP50 },
          IS_SEQUENTIAL ? "≤ 4.5 s" : undefined,
        ),
      );
      rows.push(row(`lifecycle ${label}: p50 approve → pull request open (one at a time)`, p.approveP50, "s", null, "≤ 1.0 s"));
      rows.push(row(`lifecycle ${label}: p95 approve → pull request open (one at a time)`, p.approveP95, "s"));
      rows.push(row(`lifecycle ${label}: control-plane CPU per task`, p.cpuPerTask, "s", null, "≤ 0.15 s"));
      for (const st of p.stages) {
        const floor =
          st.state === "running"
            ? { label: "node start-up + node --test of the demo (floor)", value: (floors.nodeStartMs + floors.demoTestsMs) / 1000 }
            : st.state === "verifying"
              ? { label: "node --test of the demo, run directly (floor)", value: floors.demoTestsMs / 1000 }
              : st.state === "provisioning"
                ? { label: "bubblewrap spawn of true (floor)", value: floors.bwrapTrueMs / 1000 }
                : null;
        rows.push(row(`lifecycle ${label}: stage ${st.state} p50`, st.p50, "s", floor));
        rows.push(row(`lifecycle ${label}: stage ${st.state} p95`, st.p95, "s", floor));
      }
      rows.push(row(`lifecycle ${label}: errors`, p.errors, "tasks", null, "0"));
      rows.push(row(`lifecycle ${label}: machines left`, p.machinesLeft, "machines", null, "0"));
    }
    printBenchJson({ bench: "lifecycle", ok: phases.every((p) => !p.timedOut), rows, notes: [`PostgreSQL ${version}`] });
  } finally {
    await stopForge().catch(() => undefined);
    await substrate.cleanup();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await withBenchDatabase("lifecycle-bench", (db, url) => main(db, url));
