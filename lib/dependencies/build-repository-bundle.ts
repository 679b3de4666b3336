/**
 * What a base build request runs (issue 18; run-bundle-build-request.ts, for the dependencies
 * page's buttons through a worker and the CLI's `repo bundle build` at once): fetch the repository into the control plane's mirror, resolve a branch
 * (default: the repository's default branch) to its commit, and reuse the bundle that commit's
 * lockfile maps to — or run a trusted setup on a builder guest (always, with `isForced`). A
 * repository without a setup recipe has nothing to build: that is a refusal naming the fix.
 */
import type { DependencyBundle } from "../db/generated/client";
import { AppError } from "../errors";
import { resolveBaseRef } from "../repos/mirror";
import { getTargetRepositoryOrThrow } from "../repos/target-repositories";
import { ensureDependencyBundle, findDependencyBundle, syncRepositoryMirror } from "./ensure-dependency-bundle";
import { runDependencySetup, type TDependencyDeps } from "./run-dependency-setup";

export type TBuiltRepositoryBundle = {
  repository: string;
  sha: string;
  isReused: boolean;
  elapsedMs: number;
  bundle: DependencyBundle;
};

export async function buildRepositoryBundle(
  deps: TDependencyDeps,
  input: { name: string; ref?: string; isForced?: boolean; actorId: string | null },
): Promise<TBuiltRepositoryBundle> {
  const repo = await getTargetRepositoryOrThrow(deps, { name: input.name });
  const mirror = await syncRepositoryMirror(deps, repo);
  const sha = await resolveBaseRef(mirror, input.ref ?? repo.defaultBranch);
  const started = Date.now();
  const before = await findDependencyBundle(deps, { repositoryId: repo.id, sha, gitDir: mirror });
  if (before.kind === "none")
    throw new AppError(
      "VALIDATION_FAILED",
      `${repo.name} has no setup recipe: set one first (\`schoolcore repo setup\`, or the repository's dependencies page).`,
    );
  const bundle = input.isForced
    ? await runDependencySetup(deps, {
        repositoryId: repo.id,
        sha,
        gitDir: mirror,
        reason: "operator (forced rebuild)",
        actorId: input.actorId,
        machineSlot: "own",
      })
    : await ensureDependencyBundle(deps, {
        repositoryId: repo.id,
        sha,
        reason: "operator",
        actorId: input.actorId,
        machineSlot: "own",
      });
  // ensureDependencyBundle answers null only without a recipe, which was just ruled out
  if (!bundle) throw new AppError("VALIDATION_FAILED", `${repo.name} has no setup recipe any more.`);
  return {
    repository: repo.name,
    sha,
    isReused: !input.isForced && before.kind === "found",
    elapsedMs: Date.now() - started,
    bundle,
  };
}
