/**
 * What the operator sees of a repository's dependencies (issue 18): the recipe, every bundle
 * (size, package count, when built, from which lockfile and commit, whether the current recipe
 * and image still key it) and the recent setup runs with what the broker let through and refused.
 */
import type { Db } from "../db/client";
import { AppError } from "../errors";
import type { TBrokerLog } from "./registry-broker";
import { recipeDigest } from "./recipes";
import { parseSetupRecipe, readBuilderImage } from "./run-dependency-setup";

export async function getRepositoryDependencies(deps: { db: Db }, input: { repositoryId?: string; name?: string }) {
  const { db } = deps;
  const repo = input.repositoryId
    ? await db.targetRepository.findUnique({ where: { id: input.repositoryId } })
    : await db.targetRepository.findUnique({ where: { name: (input.name ?? "").trim().toLowerCase() } });
  if (!repo || repo.probeRunId) throw new AppError("NOT_FOUND", "No such repository.");
  const recipe = parseSetupRecipe(repo.setupRecipe);
  const currentRecipeDigest = recipe ? recipeDigest(recipe) : null;
  const { imageDigest } = await readBuilderImage(db).catch(() => ({ imageDigest: null as string | null }));
  const bundles = await db.dependencyBundle.findMany({
    where: { repositoryId: repo.id },
    orderBy: { createdAt: "desc" },
    take: 50,
  });
  const runs = await db.dependencySetupRun.findMany({
    where: { repositoryId: repo.id },
    orderBy: { startedAt: "desc" },
    take: 20,
  });
  const requests = await db.bundleBuildRequest.findMany({
    where: { repositoryId: repo.id },
    orderBy: { createdAt: "desc" },
    take: 10,
  });
  const requesterIds = [...new Set(requests.flatMap((r) => (r.requestedById ? [r.requestedById] : [])))];
  const requesters = new Map(
    (await db.user.findMany({ where: { id: { in: requesterIds } }, select: { id: true, name: true } })).map((u) => [
      u.id,
      u.name,
    ]),
  );
  // candidates whose trusted checks said "dependencies changed in the candidate": the ones an
  // operator may decide to build a bundle for from the candidate's own lockfile
  const changedEvidence = await db.verificationEvidence.findMany({
    where: { repository: repo.name, checks: { path: ["dependencies", "isCandidateLockfileChanged"], equals: true } },
    orderBy: { createdAt: "desc" },
    take: 50,
    select: {
      candidateId: true,
      createdAt: true,
      candidate: { select: { taskId: true, issueNumber: true, round: true, headSha: true } },
    },
  });
  const changedLockfileCandidates = changedEvidence
    .filter((e, i) => changedEvidence.findIndex((other) => other.candidateId === e.candidateId) === i)
    .slice(0, 20)
    .map((e) => ({ id: e.candidateId, ...e.candidate, checkedAt: e.createdAt }));
  return {
    repository: { id: repo.id, name: repo.name, defaultBranch: repo.defaultBranch },
    recipe,
    recipeDigest: currentRecipeDigest,
    bundles: bundles.map((b) => ({
      id: b.id,
      sizeBytes: Number(b.sizeBytes),
      packageCount: b.packageCount,
      fileCount: b.fileCount,
      createdAt: b.createdAt,
      sourceSha: b.sourceSha,
      source: b.source,
      candidateId: b.candidateId,
      lockfiles: b.lockfiles as { path: string; sha256: string }[],
      lockfileDigest: b.lockfileDigest,
      artifactDigest: b.artifactDigest,
      setupRunId: b.setupRunId,
      /** built for the recipe and image in force now (its lockfile decides which tasks use it) */
      isCurrent: b.recipeDigest === currentRecipeDigest && b.imageDigest === imageDigest && b.source === "base",
    })),
    setupRuns: runs.map((r) => ({
      id: r.id,
      state: r.state,
      reason: r.reason,
      sourceSha: r.sourceSha,
      candidateId: r.candidateId,
      startedAt: r.startedAt,
      durationMs: r.durationMs,
      bundleId: r.bundleId,
      errorCode: r.errorCode,
      errorSummary: r.errorSummary,
      fetchLog: (r.fetchLog ?? null) as TBrokerLog | null,
    })),
    buildRequests: requests.map((r) => ({
      id: r.id,
      kind: r.kind as "base" | "candidate",
      ref: r.ref,
      candidateId: r.candidateId,
      isForced: r.isForced,
      state: r.state,
      waitingReason: r.waitingReason,
      attempts: r.attempts,
      sourceSha: r.sourceSha,
      bundleId: r.bundleId,
      isReused: r.isReused,
      errorCode: r.errorCode,
      errorSummary: r.errorSummary,
      requestedBy: r.requestedById ? (requesters.get(r.requestedById) ?? "a removed user") : null,
      createdAt: r.createdAt,
      startedAt: r.startedAt,
      finishedAt: r.finishedAt,
    })),
    /** a build request or a setup run is under way: the page follows it live */
    isBuilding:
      requests.some((r) => r.state === "queued" || r.state === "running") || runs.some((r) => r.state === "running"),
    changedLockfileCandidates,
  };
}

export type TRepositoryDependencies = Awaited<ReturnType<typeof getRepositoryDependencies>>;
