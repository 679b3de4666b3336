/**
 * The dependency bundle an agent profile's code needs (issue 26), had the way a repository's is
 * (ensure-dependency-bundle.ts): when the code carries a lockfile, the bundle keyed by (guest
 * image, that lockfile, the recipe it selects with the operator's registries) — reused by every
 * task and every profile version whose code has the same lockfile — or, the first time, one
 * trusted setup run on a builder guest through the registry broker (run-dependency-setup.ts,
 * install scripts off as the recipes enforce). Code without a lockfile needs none.
 *
 * Built at the first task that needs it, in that task's machine slot and before its deadline is
 * fixed (as a repository's first bundle is), rather than queued when the profile is written: a
 * profile is written far more often than it runs, the build needs the operator's registries and
 * the guest image as they are when it runs, and a build inside the task's provisioning needs no
 * second machine slot, queue or sweep. Every failure is AGENT_DEPENDENCIES_FAILED: the agent
 * never starts without the packages it locked (fail closed).
 */
import fs from "node:fs/promises";
import path from "node:path";
import { readAgentCodeLockfile } from "../agents/agent-code-lockfile";
import { AGENT_CODE_LIMITS } from "../agents/store-agent-code";
import type { TLockfileRecipeKind } from "../contract/lockfiles";
import type { Db } from "../db/client";
import type { DependencyBundle } from "../db/generated/client";
import { AppError, isAppError } from "../errors";
import { readSetting } from "../settings/operator-settings";
import { recipeDigest, ZSetupRecipeSchema, type TSetupRecipe } from "./recipes";
import {
  bundleKeyDigest,
  findAgentBundle,
  readBuilderImage,
  runAgentDependencySetup,
  type TDependencyDeps,
  type TSetupSource,
} from "./run-dependency-setup";

/** The recipe an agent's lockfile selects, with the operator's registries; null = none configured. */
export async function agentRecipeOf(db: Db, kind: TLockfileRecipeKind): Promise<TSetupRecipe | null> {
  const { registries } = await readSetting({ db }, { key: "agents.dependencies" });
  return registries.length > 0 ? ZSetupRecipeSchema.parse({ v: 1, kind, registries }) : null;
}

/** The key an agent code's bundle has now (the image and the registries as they are). */
export async function agentBundleKeyDigest(db: Db, recipe: TSetupRecipe, lockfileDigest: string): Promise<string> {
  const { imageDigest } = await readBuilderImage(db);
  return bundleKeyDigest({ imageDigest, lockfileDigest, recipeDigest: recipeDigest(recipe) });
}

const failed = (message: string) => new AppError("AGENT_DEPENDENCIES_FAILED", message);

export async function ensureAgentDependencyBundle(
  deps: TDependencyDeps,
  input: {
    code: { digest: string; bytes: Buffer };
    reason: string;
    machineSlot: TSetupSource["machineSlot"];
  },
): Promise<DependencyBundle | null> {
  const { db, env } = deps;
  await fs.mkdir(path.join(env.dataDir, "staging"), { recursive: true });
  const staging = await fs.mkdtemp(path.join(env.dataDir, "staging", "agent-lockfile-"));
  let lockfile;
  try {
    const archivePath = path.join(staging, "code");
    await fs.writeFile(archivePath, input.code.bytes, { mode: 0o600, flag: "wx" });
    lockfile = await readAgentCodeLockfile({ archivePath, limits: AGENT_CODE_LIMITS });
  } catch (error) {
    if (isAppError(error) && error.code === "VALIDATION_FAILED")
      throw failed(`The agent's dependencies cannot be built: ${error.message}`);
    throw error;
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
  if (lockfile.kind === "none") return null;

  const recipe = await agentRecipeOf(db, lockfile.recipeKind);
  if (!recipe)
    throw failed(
      `The agent's code carries a lockfile (${lockfile.recipeKind}), and no registries are configured for agent profiles' dependencies: set "Registries agent profiles' dependencies come from" on Operator → Limits, then retry the task.`,
    );
  const existing = await findAgentBundle(db, await agentBundleKeyDigest(db, recipe, lockfile.inputs.lockfileDigest));
  if (existing) return existing;
  try {
    return await runAgentDependencySetup(deps, {
      codeDigest: input.code.digest,
      recipe,
      inputs: lockfile.inputs,
      reason: input.reason,
      machineSlot: input.machineSlot,
    });
  } catch (error) {
    // The recipe failed or timed out, or its bundle broke the archive rules: the student's lockfile
    // (or the registry) is the cause, and the agent must not start without it. Cancellation, the
    // machine cap and provider failures keep their own codes (and their retry rules).
    if (isAppError(error) && (error.code === "DEPENDENCY_SETUP_FAILED" || error.code === "DEPENDENCY_BUNDLE_REFUSED"))
      throw failed(`The agent's dependencies could not be built: ${error.message}`);
    throw error;
  }
}
