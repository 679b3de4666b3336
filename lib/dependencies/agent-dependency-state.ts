/**
 * Where an agent profile version's dependency bundle stands (issue 26), for the operator's profile
 * page and `agent list` / `agent show` (the profile reads of lib/agents, each version with its
 * state: lib/agents sits below this folder and does not read bundles itself): from what the version recorded when its code was stored
 * (the recipe its lockfile selects, that lockfile's digest) and the bundles and setup runs of agent
 * code — never by reading the code again. "built" is the bundle its next task uses (same lockfile,
 * same recipe and registries, same guest image); else the latest setup run for that lockfile
 * and recipe says "building" or "failed"; else "pending" (built at its first task).
 */
import { getAgentProfile, listAgentProfiles } from "../agents/agent-profiles.repo";
import { LOCKFILE_RECIPE_KINDS, type TLockfileRecipeKind } from "../contract/lockfiles";
import type { Db } from "../db/client";
import { agentBundleKeyDigest, agentRecipeOf } from "./ensure-agent-dependency-bundle";
import { recipeDigest } from "./recipes";
import { findAgentBundle } from "./run-dependency-setup";

export type TAgentDependencyState =
  /** no lockfile in its code (or no code): nothing to build */
  | { state: "none" }
  /** a lockfile, and no registries configured (setting agents.dependencies): its tasks block */
  | { state: "unconfigured"; recipe: TLockfileRecipeKind }
  /** not built yet: its first task builds it */
  | { state: "pending"; recipe: TLockfileRecipeKind }
  | { state: "building"; recipe: TLockfileRecipeKind; setupRunId: string; startedAt: Date }
  | {
      state: "built";
      recipe: TLockfileRecipeKind;
      bundleId: string;
      artifactDigest: string;
      packageCount: number;
      sizeBytes: number;
      builtAt: Date;
    }
  | {
      state: "failed";
      recipe: TLockfileRecipeKind;
      setupRunId: string;
      errorCode: string | null;
      errorSummary: string | null;
      failedAt: Date;
    };

const isLockfileRecipeKind = (value: string): value is TLockfileRecipeKind =>
  (LOCKFILE_RECIPE_KINDS as readonly string[]).includes(value);

export async function readAgentDependencyState(
  db: Db,
  version: { dependencyRecipe: string | null; dependencyLockfileDigest: string | null },
): Promise<TAgentDependencyState> {
  const kind = version.dependencyRecipe;
  const lockfileDigest = version.dependencyLockfileDigest;
  if (!kind || !lockfileDigest || !isLockfileRecipeKind(kind)) return { state: "none" };
  const recipe = await agentRecipeOf(db, kind);
  if (!recipe) return { state: "unconfigured", recipe: kind };
  const bundle = await findAgentBundle(db, await agentBundleKeyDigest(db, recipe, lockfileDigest));
  if (bundle)
    return {
      state: "built",
      recipe: kind,
      bundleId: bundle.id,
      artifactDigest: bundle.artifactDigest,
      packageCount: bundle.packageCount,
      sizeBytes: Number(bundle.sizeBytes),
      builtAt: bundle.createdAt,
    };
  const run = await db.dependencySetupRun.findFirst({
    where: { repositoryId: null, lockfileDigest, recipeDigest: recipeDigest(recipe) },
    orderBy: { startedAt: "desc" },
  });
  if (run?.state === "running")
    return { state: "building", recipe: kind, setupRunId: run.id, startedAt: run.startedAt };
  if (run && run.state !== "succeeded")
    return {
      state: "failed",
      recipe: kind,
      setupRunId: run.id,
      errorCode: run.errorCode,
      errorSummary: run.errorSummary,
      failedAt: run.finishedAt ?? run.startedAt,
    };
  return { state: "pending", recipe: kind };
}

/** The profile list (each with its current version), each with its current version's bundle state. */
export async function listAgentProfilesWithDependencies(deps: { db: Db }) {
  const profiles = await listAgentProfiles(deps);
  const versions = await deps.db.agentProfileVersion.findMany({
    where: { OR: profiles.map((p) => ({ profileId: p.id, version: p.version })) },
    select: { profileId: true, dependencyRecipe: true, dependencyLockfileDigest: true },
  });
  return Promise.all(
    profiles.map(async (profile) => {
      const current = versions.find((v) => v.profileId === profile.id);
      return {
        ...profile,
        dependencies: current ? await readAgentDependencyState(deps.db, current) : ({ state: "none" } as const),
      };
    }),
  );
}

/** One profile with every version, each with its bundle state. */
export async function getAgentProfileWithDependencies(deps: { db: Db }, input: { name: string }) {
  const profile = await getAgentProfile(deps, input);
  const versions = await Promise.all(
    profile.versions.map(async (version) => ({
      ...version,
      dependencies: await readAgentDependencyState(deps.db, version),
    })),
  );
  return { ...profile, versions };
}
