/**
 * The worker's path from approval to pull request: the demo task runs to review on the local
 * substrate, a teacher approves, and advancing the task pushes `school/<task>` to the local forge
 * (the demo target's remote) and opens exactly one pull request, however often it is advanced.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../contract/actor";
import { runGit } from "../git/run-git";
import { createForgeRepository } from "../../sidecars/local-forge/create-forge-repository";
import { startLocalForge, type TLocalForge } from "../../sidecars/local-forge/start-local-forge";
import { saveGitHubPublishSetting } from "./publish-settings";
import { withTaskLock } from "../jobs/task-lock";
import { advanceTask } from "../jobs/advance-task";
import {
  createLifecycleWorld,
  decideRoundOneCandidate,
  type LifecycleWorld,
} from "../lifecycle/testing/lifecycle-fixture";
import { startWorkerProcess } from "../lifecycle/testing/worker-process";
import { ensureCredentialsDir } from "../secrets/credential-file";

let world: LifecycleWorld;
let forge: TLocalForge;
let token: string;
let lockPool: pg.Pool;
let teacher: Actor;

beforeAll(async () => {
  world = await createLifecycleWorld();
  token = `forge_${randomBytes(18).toString("hex")}`;
  const tokenFile = path.join(ensureCredentialsDir(world.env.dataDir), "forge-token");
  await fs.writeFile(tokenFile, token, { mode: 0o600 });
  forge = await startLocalForge({
    port: 0,
    adminPort: 0,
    token,
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
  lockPool = new pg.Pool({ connectionString: world.databaseUrl, max: 4 });
  const teacherRow = await world.db.user.create({
    data: { email: "t@forge.test", name: "T", roles: ["teacher"], passwordHash: "x" },
  });
  teacher = { userId: teacherRow.id, email: teacherRow.email, roles: ["teacher"] };
});

afterAll(async () => {
  await forge?.stop();
  await lockPool?.end();
});

/** As the worker does it: under the task's advisory lock. */
function advanceLocked(taskId: string) {
  return withTaskLock(lockPool, `task:${taskId}`, () => advanceTask(world.ctx, taskId));
}

async function approvedDemoTask(): Promise<{ taskId: string; headSha: string }> {
  const taskId = await world.createDemoTask();
  await advanceTask(world.ctx, taskId);
  const { headSha } = await decideRoundOneCandidate(world, {
    taskId,
    actor: teacher,
    verdict: "approve",
    comment: "ship it",
  });
  return { taskId, headSha };
}

async function forgePulls(): Promise<{ number: number; head: { ref: string; sha: string } }[]> {
  const response = await fetch(`${forge.url}/repos/demo/calculator/pulls?state=all`, {
    headers: { authorization: `Bearer ${token}` },
  });
  return (await response.json()) as { number: number; head: { ref: string; sha: string } }[];
}

describe("publication from the worker", () => {
  it("approval leads to exactly one pull request at the approved head, however often the task is advanced", async () => {
    const { taskId, headSha } = await approvedDemoTask();
    await Promise.all([advanceLocked(taskId), advanceLocked(taskId)]);
    for (let i = 0; i < 3; i++) await advanceLocked(taskId);
    const task = await world.db.task.findUniqueOrThrow({
      where: { id: taskId },
      include: { pullRequest: true, transitions: { orderBy: { id: "asc" } } },
    });
    expect(task.state, `${task.errorCode}: ${task.errorSummary}`).toBe("pr_open");
    expect(task.transitions.map((t) => t.toState).slice(-3)).toEqual(["approved", "pr_pending", "pr_open"]);
    const pulls = (await forgePulls()).filter((p) => p.head.ref === `school/${taskId}`);
    expect(pulls).toHaveLength(1);
    expect(pulls[0]!.head).toMatchObject({ ref: `school/${taskId}`, sha: headSha });
    expect(task.pullRequest).toMatchObject({ state: "open", number: pulls[0]!.number, headSha });
  });

  it.each(["publish:pushed", "publish:create_sent"])(
    "a worker SIGKILLed right after %s: the restarted worker opens exactly one PR at once",
    async (point) => {
      const { taskId, headSha } = await approvedDemoTask();
      const crashing = startWorkerProcess({ world, crashAfter: point });
      await crashing.exited;
      expect(crashing.output()).toContain(`crash point ${point} reached`);
      const stuck = await world.db.pullRequest.findUniqueOrThrow({ where: { taskId } });
      expect(stuck.leaseTakenAt).not.toBeNull(); // the dead worker's lease

      const worker = startWorkerProcess({ world });
      try {
        const deadline = Date.now() + 60_000;
        while (
          (await world.db.task.findUniqueOrThrow({ where: { id: taskId } })).state !== "pr_open" &&
          Date.now() < deadline
        )
          await new Promise((r) => setTimeout(r, 250));
      } finally {
        worker.child.kill("SIGTERM");
        await worker.exited;
      }
      const task = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
      expect(task.state, `${task.errorCode}: ${task.errorSummary}`).toBe("pr_open");
      const pulls = (await forgePulls()).filter((p) => p.head.ref === `school/${taskId}`);
      expect(pulls).toHaveLength(1);
      expect(pulls[0]!.head.sha).toBe(headSha);
    },
  );
});
