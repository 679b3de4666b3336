/**
 * The worker's path from approval to pull request: the demo task runs to review on the local
 * substrate, a teacher approves, and advancing the task pushes `school/<task>` to the local forge
 * (the demo target's remote) and opens exactly one pull request, however often it is advanced.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/permissions";
import { runGit } from "../git/run-git";
import { createForgeRepository } from "../publish/forge/create-forge-repository";
import { startLocalForge, type TLocalForge } from "../publish/forge/start-local-forge";
import { saveGitHubPublishSetting } from "../publish/publish-settings";
import { decideCandidate } from "../review/decide-candidate";
import { readLatestEvidence } from "../review/evidence-view";
import { advanceTask } from "./advance-task";
import { createLifecycleWorld, type LifecycleWorld } from "./testing/lifecycle-fixture";

let world: LifecycleWorld;
let forge: TLocalForge;
let token: string;

beforeAll(async () => {
  world = await createLifecycleWorld();
  token = `forge_${randomBytes(18).toString("hex")}`;
  const tokenFile = path.join(world.env.dataDir, "forge-token");
  await fs.writeFile(tokenFile, token, { mode: 0o600 });
  forge = await startLocalForge({ port: 0, adminPort: 0, token, adminToken: `admin_${randomBytes(18).toString("hex")}`, dataDir: world.env.dataDir });
  const repo = await createForgeRepository({ dataDir: world.env.dataDir, repository: "demo/calculator" });
  await runGit({ cwd: path.join(world.env.dataDir, "demo-src"), args: ["push", "--quiet", repo.gitDir, `${world.demoSha}:refs/heads/main`] });
  await world.db.targetRepository.update({ where: { name: "demo/calculator" }, data: { cloneUrl: `${forge.url}/demo/calculator.git` } });
  await saveGitHubPublishSetting(world.db, { apiBaseUrl: forge.url, tokenFile }, null);
});

afterAll(async () => {
  await forge?.stop();
});

async function forgePulls(): Promise<{ number: number; head: { ref: string; sha: string } }[]> {
  const response = await fetch(`${forge.url}/repos/demo/calculator/pulls?state=all`, { headers: { authorization: `Bearer ${token}` } });
  return (await response.json()) as { number: number; head: { ref: string; sha: string } }[];
}

describe("publication from the worker", () => {
  it("approval leads to exactly one pull request at the approved head, however often the task is advanced", async () => {
    const taskId = await world.createDemoTask();
    await advanceTask(world.ctx, taskId);
    const candidate = await world.db.candidate.findUniqueOrThrow({ where: { taskId } });
    const evidence = await readLatestEvidence(world.db, candidate);
    const teacherRow = await world.db.user.create({ data: { email: "t@forge.test", name: "T", roles: ["teacher"], passwordHash: "x" } });
    const teacher: Actor = { userId: teacherRow.id, email: teacherRow.email, roles: ["teacher"] };
    await decideCandidate({ db: world.db, actor: teacher, input: { candidateId: candidate.id, headSha: candidate.headSha, evidenceId: evidence.evidenceId, manifestDigest: evidence.manifestDigest, verdict: "approve", comment: "ship it" } });

    await Promise.all([advanceTask(world.ctx, taskId), advanceTask(world.ctx, taskId)]);
    for (let i = 0; i < 3; i++) await advanceTask(world.ctx, taskId);
    const task = await world.db.task.findUniqueOrThrow({ where: { id: taskId }, include: { pullRequest: true, transitions: { orderBy: { id: "asc" } } } });
    expect(task.state, `${task.errorCode}: ${task.errorSummary}`).toBe("pr_open");
    expect(task.transitions.map((t) => t.toState).slice(-3)).toEqual(["approved", "pr_pending", "pr_open"]);
    const pulls = await forgePulls();
    expect(pulls).toHaveLength(1);
    expect(pulls[0]!.head).toMatchObject({ ref: `school/${taskId}`, sha: candidate.headSha });
    expect(task.pullRequest).toMatchObject({ state: "open", number: pulls[0]!.number, headSha: candidate.headSha });
  });
});
