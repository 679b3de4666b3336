/**
 * The whole-system crash (issue 17): a dozen tasks in flight on real processes — embedded
 * PostgreSQL, the local substrate (real bubblewrap guests) and the worker, each in its own
 * process group — then SIGKILL to every one of them, and a plain restart. With no operator
 * action, at least 90 % of the tasks must reach review by themselves: an infrastructure failure
 * before any student code ran is retried as a new attempt (visible in the task's history), and
 * a machine the provider's own get and list show gone is recorded destroyed, not quarantined.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDb, type Db } from "../db/client";
import { startEmbeddedPostgres, type EmbeddedPostgres } from "../db/embedded-postgres";
import { applyMigrations } from "../db/migrations";
import { writeDemoRepository, DEMO_ISSUE } from "../demo/demo-target";
import { parseEnv, type TEnv } from "../env";
import { DEFAULT_TASK_LIMITS } from "../contract/limits";
import { DEMO_TRUSTED_MANIFEST } from "../contract/trusted-manifest";
import { SCRIPTED_FIX } from "../lifecycle/testing/lifecycle-fixture";
import { qualifyForTests } from "../probes/testing/qualify-for-tests";
import { PROJECT_ROOT } from "../project-root";
import { addTargetRepository } from "../repos/target-repositories";
import { writeSetting } from "../settings/operator-settings";
import { createTask } from "../tasks/create-task";
import { findFreePort } from "../testing/free-port";
import { saveTrustedManifest } from "../verify/trusted-manifests";
import { ensureDefaultGuestImage, DEFAULT_GUEST_IMAGE } from "../../sidecars/local-substrate/default-guest-image";

const TASKS = 12;
const IN_FLIGHT = ["provisioning", "running", "collecting", "imported", "verifying"];
const AT_REST = ["review_pending", "blocked", "failed"];

let dataDir: string;
let env: TEnv;
let childEnv: NodeJS.ProcessEnv;
let pgPort: number;
let postgres: EmbeddedPostgres | undefined;
let db: Db | undefined;
let isQualified = false;
const children: ChildProcess[] = [];
let output = "";

function startProcess(args: string[]): ChildProcess {
  // Its own process group, so a "kill every process" reaches its children (guests, tsx) too.
  const child = spawn(process.execPath, ["--import", "tsx", ...args], {
    cwd: PROJECT_ROOT,
    env: childEnv,
    detached: true,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout!.on("data", (d: Buffer) => (output += d.toString()));
  child.stderr!.on("data", (d: Buffer) => (output += d.toString()));
  children.push(child);
  return child;
}

function killGroup(pid: number | undefined) {
  if (!pid) return;
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // already gone
  }
}

async function readPostmasterPid(): Promise<number> {
  return Number((await fs.readFile(path.join(dataDir, "postgres", "postmaster.pid"), "utf8")).split("\n")[0]);
}

async function startSystem(): Promise<void> {
  postgres = await startEmbeddedPostgres({ dataDir, port: pgPort });
  childEnv.DATABASE_URL = postgres.url;
  db = createDb(postgres.url);
  startProcess([path.join(PROJECT_ROOT, "scripts", "cli", "main.ts"), "substrate", "serve"]);
  for (let i = 0; i < 200; i++) {
    if (
      await fetch(`http://127.0.0.1:${env.LOCAL_SUBSTRATE_PORT}/v1/machines`).then(
        () => true,
        () => false,
      )
    )
      break;
    await new Promise((r) => setTimeout(r, 100));
  }
  // Qualified once the substrate answers: its limits mode is part of the configuration digest.
  if (!isQualified) {
    await qualifyForTests(db, env);
    isQualified = true;
  }
  startProcess([path.join(PROJECT_ROOT, "scripts", "worker.ts")]);
}

const tally = (values: string[]) =>
  values.reduce<Record<string, number>>((acc, s) => ({ ...acc, [s]: (acc[s] ?? 0) + 1 }), {});

/** Each task's state; a blocked task whose automatic retry is planned is still on its way. */
async function states(): Promise<string[]> {
  const tasks = await db!.task.findMany({ select: { state: true, autoRetryAt: true } });
  return tasks.map((t) => (t.state === "blocked" && t.autoRetryAt ? "blocked:retry-planned" : t.state));
}

beforeAll(async () => {
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-crash-"));
  await fs.chmod(dataDir, 0o711);
  pgPort = await findFreePort();
  const vars = {
    DATA_DIR: dataDir,
    NODE_ENV: "test",
    EMBEDDED_PG_PORT: String(pgPort),
    LOCAL_SUBSTRATE_PORT: String(await findFreePort()),
    LOCAL_SUBSTRATE_ADMIN_PORT: String(await findFreePort()),
    LOG_LEVEL: "warn",
  };
  env = parseEnv(vars);
  childEnv = { PATH: process.env.PATH, HOME: process.env.HOME, ...vars } as NodeJS.ProcessEnv;
  await ensureDefaultGuestImage(dataDir);
  postgres = await startEmbeddedPostgres({ dataDir, port: pgPort });
  await applyMigrations(postgres.url);
  const setup = createDb(postgres.url);
  const demo = await writeDemoRepository(path.join(dataDir, "demo-src"));
  await addTargetRepository({ db: setup }, { name: "demo/calculator", cloneUrl: demo.path, actor: null });
  await writeSetting(
    { db: setup },
    {
      key: "spend.ceilings",
      value: { globalMicros: 1_000_000_000, perTaskMicros: 100_000_000 },
      actor: null,
      reason: "test setup",
    },
  );
  await writeSetting(
    { db: setup },
    {
      key: "guest.image",
      value: { type: "smolmachine", reference: DEFAULT_GUEST_IMAGE },
      actor: null,
      reason: "test setup",
    },
  );
  await writeSetting(
    { db: setup },
    {
      key: "guest.agent",
      value: { command: SCRIPTED_FIX },
      actor: null,
      reason: "test setup",
    },
  );
  await writeSetting(
    { db: setup },
    {
      key: "task.limits",
      value: { ...DEFAULT_TASK_LIMITS, wallClockSeconds: 120, memoryMb: 512 },
      actor: null,
      reason: "test setup",
    },
  );
  await writeSetting(
    { db: setup },
    {
      key: "task.retry",
      value: { maxAutomaticRetries: 2, backoffSeconds: 1 },
      actor: null,
      reason: "test setup",
    },
  );
  await saveTrustedManifest({ db: setup }, { content: DEMO_TRUSTED_MANIFEST, actor: null });
  for (let i = 0; i < TASKS; i++) {
    await createTask(
      { db: setup, env },
      {
        repository: "demo/calculator",
        issueNumber: DEMO_ISSUE.number,
        issueTitle: `${DEMO_ISSUE.title} (${i + 1})`,
        prompt: DEMO_ISSUE.body,
        actor: null,
      },
    );
  }
  await setup.$disconnect();
  await postgres.stop();
}, 180_000);

afterAll(async () => {
  for (const child of children) killGroup(child.pid);
  await db?.$disconnect().catch(() => undefined);
  await postgres?.stop().catch(() => undefined);
  await fs.rm(dataDir, { recursive: true, force: true });
});

describe("after killing every process with a dozen tasks in flight", () => {
  it(
    "a plain restart brings at least 90 % of the tasks to review with no operator action",
    { timeout: 600_000 },
    async () => {
      await startSystem();
      // Wait until the pipeline is full: tasks in flight, guests being started, and at least one
      // student run under way (the moments a crash used to strand tasks: "the machine disappeared
      // while starting", and a running task whose guest the restarted provider no longer knows).
      const startedAt = Date.now();
      for (;;) {
        const now = await states();
        const guests = await db!.guestMachine.count({ where: { state: { in: ["created", "started", "ready"] } } });
        if (now.filter((s) => IN_FLIGHT.includes(s)).length >= 4 && guests >= 3 && now.includes("running")) break;
        if (Date.now() - startedAt > 180_000)
          throw new Error(`no tasks in flight: ${now.join(",")}\n${output.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 200));
      }
      const before = await states();
      const machinesBefore = (await db!.guestMachine.findMany({ select: { state: true } })).map((m) => m.state);

      // Crash: every process, at once, no shutdown path.
      const postmaster = await readPostmasterPid();
      for (const child of children) killGroup(child.pid);
      killGroup(postmaster);
      await db!.$disconnect().catch(() => undefined);
      children.length = 0;
      for (
        let i = 0;
        i < 100 &&
        (await fs.access(`/proc/${postmaster}`).then(
          () => true,
          () => false,
        ));
        i++
      )
        await new Promise((r) => setTimeout(r, 100));

      const restartedAt = Date.now();
      await startSystem();
      // At rest twice in a row: a task is blocked a moment before its automatic retry is planned.
      for (let restSeen = 0; ;) {
        const now = await states();
        restSeen = now.every((s) => AT_REST.includes(s)) ? restSeen + 1 : 0;
        if (restSeen >= 2) break;
        if (Date.now() - restartedAt > 480_000)
          throw new Error(`not at rest: ${now.join(",")}\n${output.slice(-3000)}`);
        await new Promise((r) => setTimeout(r, 500));
      }
      const tasks = await db!.task.findMany({ include: { transitions: { orderBy: { id: "asc" } }, machines: true } });
      const reviewed = tasks.filter((t) => t.state === "review_pending");
      const summary = {
        atKill: { tasks: tally(before), machines: tally(machinesBefore) },
        reviewed: reviewed.length,
        seconds: Math.round((Date.now() - restartedAt) / 1000),
        retried: tasks.filter((t) => t.attempt > 0).length,
        notReviewed: tasks
          .filter((t) => t.state !== "review_pending")
          .map((t) => `${t.state} ${t.errorCode}: ${t.errorSummary}`),
        machines: tally(tasks.flatMap((t) => t.machines.map((m) => m.state))),
      };
      console.log(`whole-system crash: ${JSON.stringify(summary)}`);
      expect(reviewed.length / TASKS, JSON.stringify(summary)).toBeGreaterThanOrEqual(0.9);
      // A retried task shows its new attempt in its history.
      for (const task of tasks.filter((t) => t.attempt > 0))
        expect(task.transitions.some((t) => /attempt \d+/.test(t.reason ?? ""))).toBe(true);
      // Nothing is left live, and no machine the provider no longer knows is quarantined.
      expect(summary.machines.cleanup_quarantined ?? 0).toBe(0);
      for (const state of ["requested", "created", "started", "ready", "exported"])
        expect(summary.machines[state] ?? 0).toBe(0);
    },
  );
});
