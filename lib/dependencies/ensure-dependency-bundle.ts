/**
 * The bundle a task of a repository uses (issue 18): the one keyed by (guest image, the BASE
 * commit's lockfile, recipe) — reused by every task until one of those changes — or, the first
 * time, a trusted setup run that builds it. A repository with no recipe needs none. The lookup
 * reads only the base commit's lockfile from the control plane's mirror, never a guest's tree.
 */
import type { DependencyBundle } from "../db/generated/client";
import { readMirrorCredential } from "../repos/mirror-credentials";
import { mirrorPathFor, syncMirror } from "../repos/mirror";
import { hasCommit } from "../git/git-plumbing";
import { readRecipeInputs } from "./read-recipe-inputs";
import { recipeDigest, resolveRecipe } from "./recipes";
import {
  bundleKeyDigest,
  parseSetupRecipe,
  readBuilderImage,
  runDependencySetup,
  type TDependencyDeps,
  type TSetupSource,
} from "./run-dependency-setup";

export type TBundleLookup =
  | { kind: "none" }
  | { kind: "found"; bundle: DependencyBundle; lockfileDigest: string }
  | { kind: "missing"; lockfileDigest: string; keyDigest: string };

/** Which bundle (if any) a commit's lockfile maps to, without building anything. */
export async function findDependencyBundle(
  deps: Pick<TDependencyDeps, "db" | "env">,
  input: { repositoryId: string; sha: string; gitDir: string },
): Promise<TBundleLookup> {
  const repo = await deps.db.targetRepository.findUniqueOrThrow({ where: { id: input.repositoryId } });
  const recipe = parseSetupRecipe(repo.setupRecipe);
  if (!recipe) return { kind: "none" };
  const inputs = await readRecipeInputs({
    gitDir: input.gitDir,
    sha: input.sha,
    inputFiles: resolveRecipe(recipe).inputFiles,
  });
  const { imageDigest } = await readBuilderImage(deps.db);
  const keyDigest = bundleKeyDigest({
    imageDigest,
    lockfileDigest: inputs.lockfileDigest,
    recipeDigest: recipeDigest(recipe),
  });
  const bundle = await deps.db.dependencyBundle.findUnique({
    where: { repositoryId_keyDigest: { repositoryId: repo.id, keyDigest } },
  });
  return bundle
    ? { kind: "found", bundle, lockfileDigest: inputs.lockfileDigest }
    : { kind: "missing", lockfileDigest: inputs.lockfileDigest, keyDigest };
}

/** Fetches the repository into the control plane's mirror (its branches as they are now). */
export async function syncRepositoryMirror(
  deps: Pick<TDependencyDeps, "db" | "env">,
  repository: { name: string; cloneUrl: string },
): Promise<string> {
  return syncMirror({
    db: deps.db,
    dataDir: deps.env.dataDir,
    repository: repository.name,
    source: { cloneUrl: repository.cloneUrl, credential: await readMirrorCredential(deps.db) },
  });
}

/** The mirror holding `sha`, fetched again when it does not have it yet. */
export async function mirrorWithCommit(
  deps: Pick<TDependencyDeps, "db" | "env">,
  repository: { name: string; cloneUrl: string },
  sha: string,
): Promise<string> {
  const mirror = mirrorPathFor(deps.env.dataDir, repository.name);
  if (await hasCommit({ gitDir: mirror, sha }).catch(() => false)) return mirror;
  return syncRepositoryMirror(deps, repository);
}

export async function ensureDependencyBundle(
  deps: TDependencyDeps,
  input: {
    repositoryId: string;
    sha: string;
    reason: string;
    actorId?: string | null;
    machineSlot: TSetupSource["machineSlot"];
  },
): Promise<DependencyBundle | null> {
  const repo = await deps.db.targetRepository.findUniqueOrThrow({ where: { id: input.repositoryId } });
  if (!repo.setupRecipe) return null;
  const gitDir = await mirrorWithCommit(deps, repo, input.sha);
  const lookup = await findDependencyBundle(deps, { repositoryId: repo.id, sha: input.sha, gitDir });
  if (lookup.kind === "none") return null;
  if (lookup.kind === "found") return lookup.bundle;
  return runDependencySetup(deps, {
    repositoryId: repo.id,
    sha: input.sha,
    gitDir,
    reason: input.reason,
    actorId: input.actorId ?? null,
    machineSlot: input.machineSlot,
  });
}
