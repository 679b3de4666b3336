/**
 * Approve → pull request open (issue 29, item 4), for the lifecycle benchmark: a local forge stands
 * in for GitHub (the demo target's remote and the publication API, as in `npm start`), a teacher
 * approves each task that reached review — one at a time, waiting for its pull request before the
 * next, so the figure is latency, not throughput — and the span is read from the transition log
 * (→ approved, → pr_open), the same clock as the stage table.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Db } from "../../lib/db/client";
import { runGit } from "../../lib/git/run-git";
import { saveGitHubPublishSetting } from "../../lib/publish/publish-settings";
import { decideCandidate } from "../../lib/review/decide-candidate";
import { readLatestEvidence } from "../../lib/review/evidence-view";
import { ensureCredentialsDir } from "../../lib/secrets/credential-file";
import { createForgeRepository } from "../../sidecars/local-forge/create-forge-repository";
import { startLocalForge, type TLocalForge } from "../../sidecars/local-forge/start-local-forge";
import type { Actor } from "../../lib/contract/actor";

export type TPublicationBench = { forge: TLocalForge; teacher: Actor };

/** Makes the forge the repository's remote and the publication target; returns it and a teacher. */
export async function setUpPublication(
  db: Db,
  options: { dataDir: string; repository: string; sourceDir: string; sha: string },
): Promise<TPublicationBench> {
  const token = `forge_${randomBytes(18).toString("hex")}`;
  const tokenFile = path.join(ensureCredentialsDir(options.dataDir), "forge-token");
  await fs.writeFile(tokenFile, token, { mode: 0o600 });
  const forge = await startLocalForge({
    port: 0,
    adminPort: 0,
    token,
    adminToken: `admin_${randomBytes(18).toString("hex")}`,
    dataDir: options.dataDir,
  });
  const repo = await createForgeRepository({ dataDir: options.dataDir, repository: options.repository });
  await runGit({ cwd: options.sourceDir, args: ["push", "--quiet", repo.gitDir, `${options.sha}:refs/heads/main`] });
  await db.targetRepository.update({
    where: { name: options.repository },
    data: { cloneUrl: `${forge.url}/${options.repository}.git` },
  });
  await saveGitHubPublishSetting(
    db,
    { apiBaseUrl: forge.url, tokenFile },
    null,
    "benchmark: the local forge is the publication target",
    options.dataDir,
  );
  const row = await db.user.create({
    data: {
      email: `bench-teacher-${randomBytes(4).toString("hex")}@bench.test`,
      name: "Bench teacher",
      roles: ["teacher"],
      passwordHash: "x",
    },
  });
  return { forge, teacher: { userId: row.id, email: row.email, roles: ["teacher"] } };
}

const SETTLED = ["pr_open", "pr_failed", "failed", "blocked"];

/** Approves each task in turn and returns the approve → pr_open spans (ms) of those that opened a PR. */
export async function approveEachToPr(
  db: Db,
  options: { dataDir: string; teacher: Actor; taskIds: string[]; timeoutMs: number },
) {
  const spans: number[] = [];
  const failures: string[] = [];
  for (const taskId of options.taskIds) {
    const candidate = await db.candidate.findUnique({ where: { taskId_round: { taskId, round: 1 } } });
    if (!candidate) continue;
    const evidence = await readLatestEvidence(db, candidate);
    await decideCandidate(
      { db, dataDir: options.dataDir },
      {
        actor: options.teacher,
        candidateId: candidate.id,
        headSha: candidate.headSha,
        evidenceId: evidence.evidenceId!,
        manifestDigest: evidence.manifestDigest!,
        verdict: "approve",
        comment: "benchmark approval",
      },
    );
    const deadline = Date.now() + options.timeoutMs;
    let state = "approved";
    while (!SETTLED.includes(state) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 20));
      state = (await db.task.findUniqueOrThrow({ where: { id: taskId }, select: { state: true } })).state;
    }
    const transitions = await db.taskTransition.findMany({ where: { taskId }, orderBy: { id: "asc" } });
    const at = (to: string) => transitions.find((t) => t.toState === to)?.createdAt.getTime();
    const [approved, open] = [at("approved"), at("pr_open")];
    if (approved !== undefined && open !== undefined) spans.push(open - approved);
    else failures.push(`${taskId}: ${state}`);
  }
  return { spans, failures };
}
