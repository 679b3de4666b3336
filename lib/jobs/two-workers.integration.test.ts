/**
 * N workers on one PostgreSQL (issue 16, item 3): two real worker processes (scripts/worker.ts)
 * drive 20 tasks on the real local substrate under an operator cap on concurrent machines; one
 * worker is SIGKILLed midway and a replacement starts. Every task reaches review with one student
 * and one verifier machine, the transition log holds no transition twice, the machines at the
 * provider never pass the cap, and after approval through the use case every task has exactly one
 * pull request on the local forge.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../contract/actor";
import { DEMO_ISSUE } from "../demo/demo-target";
import { runGit } from "../git/run-git";
import { PROJECT_ROOT } from "../project-root";
import { saveGitHubPublishSetting } from "../publish/publish-settings";
import { writeSetting } from "../settings/operator-settings";
import { createTask } from "../tasks/create-task";
import { createForgeRepository } from "../../sidecars/local-forge/create-forge-repository";
import { startLocalForge, type TLocalForge } from "../../sidecars/local-forge/start-local-forge";
import {
  createLifecycleWorld,
  decideRoundOneCandidate,
  type LifecycleWorld,
} from "../lifecycle/testing/lifecycle-fixture";
import { ensureCredentialsDir } from "../secrets/credential-file";

const TASKS = 20;
const MACHINE_CAP = 6;
const REVIEW_PATH = ["queued", "provisioning", "running", "collecting", "imported", "verifying", "review_pending"];
const FULL_PATH = [...REVIEW_PATH, "approved", "pr_pending", "pr_open"];

let world: LifecycleWorld;
let forge: TLocalForge;
let forgeToken: string;
let teacher: Actor;
const running = new Set<ChildProcess>();

/** The database URL with an application name, so pg_stat_activity tells the workers' connections apart. */
function urlNamed(name: string): string {
  const url = new URL(world.databaseUrl);
  url.searchParams.set("application_name", `two-workers-${name}`);
  return url.toString();
}

/** Tasks whose advisory lock (lib/jobs/task-lock.ts) a worker's connections hold right now: the tasks it is driving. */
async function tasksDrivenBy(name: string): Promise<string[]> {
  const rows = await world.db.$queryRaw<{ id: string }[]>`
    select t.id::text as id from "Task" t
    join pg_locks l on l.locktype = 'advisory' and l.granted and l.objsubid = 1 and l.objid = (hashtext('task:' || t.id::text)::bigint & 4294967295)::oid
    join pg_stat_activity a on a.pid = l.pid
    where a.application_name = ${`two-workers-${name}`}`;
  return rows.map((r) => r.id);
}

/**
 * One worker process, Node with tsx's loader in-process (no tsx parent): a SIGKILL sent to it
 * kills the worker itself, as the OOM killer would.
 */
function startWorker(name: string) {
  const child = spawn(process.execPath, ["--import", "tsx", path.join(PROJECT_ROOT, "scripts", "worker.ts")], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      NODE_ENV: "test",
      DATABASE_URL: urlNamed(name),
      DATA_DIR: world.env.dataDir,
      LOCAL_SUBSTRATE_PORT: String(world.env.LOCAL_SUBSTRATE_PORT),
      SMOLCLOUD_TOKEN_FILE: world.tokenFile,
      SCHOOLCORE_FAULT_CRASH_AFTER: "",
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.add(child);
  let output = "";
  child.stdout!.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  child.stderr!.on("data", (d: Buffer) => (output = (output + d.toString()).slice(-20_000)));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once("exit", (code, signal) => {
      running.delete(child);
      resolve({ code, signal });
    }),
  );
  return { name, child, exited, output: () => output };
}

async function waitUntil(
  what: string,
  predicate: () => Promise<boolean>,
  timeoutMs: number,
  describeState: () => Promise<string>,
) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await predicate()) return;
    await new Promise((r) => setTimeout(r, 300));
  }
  throw new Error(`${what}: not reached after ${timeoutMs} ms (${await describeState()})`);
}

async function stateCounts(taskIds: string[]): Promise<string> {
  const groups = await world.db.task.groupBy({ by: ["state"], where: { id: { in: taskIds } }, _count: true });
  return groups.map((g) => `${g.state}=${g._count}`).join(" ");
}

/** Every task short of review: its transitions (with reasons) and its machines with theirs — what a failure needs to be read. */
async function describeStuckTasks(taskIds: string[]): Promise<string> {
  const tasks = await world.db.task.findMany({
    where: { id: { in: taskIds }, state: { notIn: ["review_pending", "approved", "pr_pending", "pr_open"] } },
    include: {
      transitions: { orderBy: { id: "asc" } },
      machines: { include: { transitions: { orderBy: { id: "asc" } } } },
    },
  });
  return tasks
    .map((task) =>
      [
        `task ${task.id} ${task.state}: ${task.transitions.map((t) => `${t.toState}@${t.createdAt.toISOString()} (${t.reason ?? ""})`).join("; ")}`,
        ...task.machines.map(
          (m) =>
            `  ${m.purpose} ${m.id} provider=${m.providerId} op=${m.operationId} state=${m.state} lastError=${m.lastError ?? ""}: ${m.transitions.map((t) => `${t.fromState}->${t.toState}@${t.createdAt.toISOString()} (${t.reason ?? ""})`).join("; ")}`,
        ),
      ].join("\n"),
    )
    .join("\n");
}

beforeAll(async () => {
  world = await createLifecycleWorld();
  forgeToken = `forge_${randomBytes(18).toString("hex")}`;
  const tokenFile = path.join(ensureCredentialsDir(world.env.dataDir), "forge-token");
  await fs.writeFile(tokenFile, forgeToken, { mode: 0o600 });
  forge = await startLocalForge({
    port: 0,
    adminPort: 0,
    token: forgeToken,
    adminToken: `admin_${randomBytes(18).toString("hex")}`,
    dataDir: world.env.dataDir,
  });
  const repo = await createForgeRepository({ dataDir: world.env.dataDir, repository: "demo/calculator" });
  await runGit({
    cwd: path.join(world.env.dataDir, "demo-src"),
    args: ["push", "--quiet", repo.gitDir, `${world.demoSha}:refs/heads/main`],
  });
  await world.db.targetRepository.update({
    where: { name: "demo/calculator" },
    data: { cloneUrl: `${forge.url}/demo/calculator.git` },
  });
  await saveGitHubPublishSetting(world.db, { apiBaseUrl: forge.url, tokenFile }, null, "test setup", world.env.dataDir);
  await writeSetting(
    { db: world.db },
    {
      key: "machines.concurrency",
      value: { maxMachines: MACHINE_CAP, bySubstrate: {} },
      actor: null,
      reason: "test setup",
    },
  );
  const teacherRow = await world.db.user.create({
    data: { email: "t@workers.test", name: "T", roles: ["teacher"], passwordHash: "x" },
  });
  teacher = { userId: teacherRow.id, email: teacherRow.email, roles: ["teacher"] };
});

afterAll(async () => {
  for (const child of running) child.kill("SIGKILL");
  await forge?.stop();
});

describe("two worker processes on one database", () => {
  it(`drive ${TASKS} tasks to one pull request each, one worker SIGKILLed midway, never more than ${MACHINE_CAP} machines`, async () => {
    // The first task sets the agent and limits and opens dispatch; the rest use the same configuration.
    const taskIds = [await world.createDemoTask()];
    while (taskIds.length < TASKS) {
      const task = await createTask(
        { db: world.db, env: world.env },
        {
          repository: "demo/calculator",
          issueNumber: DEMO_ISSUE.number,
          issueTitle: DEMO_ISSUE.title,
          prompt: DEMO_ISSUE.body,
          actor: null,
        },
      );
      taskIds.push(task.id);
    }

    let peakMachines = 0;
    let isSampling = true;
    const sampler = (async () => {
      while (isSampling) {
        peakMachines = Math.max(peakMachines, await world.liveAtProvider());
        await new Promise((r) => setTimeout(r, 200));
      }
    })();

    let orphaned: string[] = [];
    const workers = [startWorker("w1"), startWorker("w2")];
    try {
      // Midway: a few tasks at review and others in flight, then w1 dies without a word.
      await waitUntil(
        "5 tasks at review",
        async () => (await world.db.task.count({ where: { id: { in: taskIds }, state: "review_pending" } })) >= 5,
        240_000,
        () => stateCounts(taskIds),
      );
      await waitUntil(
        "w1 driving a task",
        async () => (orphaned = await tasksDrivenBy("w1")).length > 0,
        120_000,
        () => stateCounts(taskIds),
      );
      workers[0]!.child.kill("SIGKILL");
      expect((await workers[0]!.exited).signal).toBe("SIGKILL");
      workers.push(startWorker("w3"));

      await waitUntil(
        "every task at review",
        async () => (await world.db.task.count({ where: { id: { in: taskIds }, state: "review_pending" } })) === TASKS,
        300_000,
        () => stateCounts(taskIds),
      );

      for (const taskId of taskIds) {
        await decideRoundOneCandidate(world, { taskId, actor: teacher, verdict: "approve", comment: "ship it" });
      }
      await waitUntil(
        "every task's pull request open",
        async () => (await world.db.task.count({ where: { id: { in: taskIds }, state: "pr_open" } })) === TASKS,
        120_000,
        () => stateCounts(taskIds),
      );
    } catch (error) {
      for (const w of workers) process.stderr.write(`--- ${w.name} ---\n${w.output().slice(-3000)}\n`);
      process.stderr.write(`--- tasks not at review or later ---\n${await describeStuckTasks(taskIds)}\n`);
      throw error;
    } finally {
      isSampling = false;
      await sampler;
      for (const w of workers.slice(1)) w.child.kill("SIGTERM");
      await Promise.all(workers.map((w) => w.exited));
    }

    expect(peakMachines).toBeLessThanOrEqual(MACHINE_CAP);
    expect(peakMachines).toBeGreaterThan(1); // the workers did run tasks side by side
    const response = await fetch(`${forge.url}/repos/demo/calculator/pulls?state=all&per_page=100`, {
      headers: { authorization: `Bearer ${forgeToken}` },
    });
    const pulls = (await response.json()) as { head: { ref: string; sha: string } }[];
    for (const taskId of taskIds) {
      const task = await world.db.task.findUniqueOrThrow({
        where: { id: taskId },
        include: {
          transitions: { orderBy: { id: "asc" } },
          machines: { include: { transitions: { orderBy: { id: "asc" } } } },
          candidates: true,
        },
      });
      // On failure, the task's machines as rows: which ones, when, under which operation, through which states.
      const machineReport = task.machines
        .map(
          (m) =>
            `${m.purpose} ${m.id} ${m.providerName} provider=${m.providerId} op=${m.operationId} created=${m.createdAt.toISOString()} state=${m.state}: ${m.transitions.map((t) => `${t.fromState}->${t.toState}@${t.createdAt.toISOString()} (${t.reason ?? ""})`).join("; ")}`,
        )
        .concat(`task: ${task.transitions.map((t) => `${t.toState}@${t.createdAt.toISOString()}`).join(" ")}`)
        .join("\n");
      expect(
        task.transitions.map((t) => t.toState),
        `task ${taskId}`,
      ).toEqual(FULL_PATH);
      expect(
        task.machines.filter((m) => m.purpose === "student").length,
        `student machines of ${taskId}:\n${machineReport}`,
      ).toBe(1);
      expect(
        task.machines.filter((m) => m.purpose === "verifier").length,
        `verifier machines of ${taskId}:\n${machineReport}`,
      ).toBe(1);
      for (const machine of task.machines) expect(machine.state).toBe("destroyed");
      const mine = pulls.filter((p) => p.head.ref === `school/${taskId}`);
      expect(mine, `pull requests of ${taskId}`).toHaveLength(1);
      expect(mine[0]!.head.sha).toBe(task.candidates[0]!.headSha);
    }
    expect(await world.liveAtProvider()).toBe(0);
    // The tasks w1 was driving when it died were finished by the others (their checks are above).
    expect(orphaned.length).toBeGreaterThan(0);
  }, 900_000);
});
