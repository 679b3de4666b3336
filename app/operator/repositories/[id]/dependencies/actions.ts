"use server";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { withActorAction } from "@/app/_server/action";
import { summaryOf } from "@/app/_server/field-errors";
import { getRunContext } from "@/app/_server/run-context";
import { getDb } from "@/lib/db/client";
import { buildRepositoryBundle } from "@/lib/dependencies/build-repository-bundle";
import { rebuildFromCandidateLockfile } from "@/lib/dependencies/rebuild-from-candidate";
import { recipeDigest, ZSetupRecipeSchema } from "@/lib/dependencies/recipes";
import { setRepositorySetup } from "@/lib/dependencies/set-repository-setup";
import { recipeFieldErrorsOf, recipeInputOf } from "./setup-recipe-form-model";

const PAGE = "/operator/repositories/[id]/dependencies";
const ZRepositoryName = z.string().trim().min(1).max(200);
const ZText = (max: number) => z.string().max(max, `at most ${max} characters`).optional();

export const setSetupRecipeAction = withActorAction({
  action: "repository.manage",
  schema: z.object({
    repository: ZRepositoryName,
    kind: z.string().max(40),
    registries: ZText(5000),
    timeoutSeconds: ZText(20),
    command: ZText(20_000),
    inputFiles: ZText(5000),
    outputDir: ZText(200),
  }),
  handler: async ({ actor, input }) => {
    const recipe = recipeInputOf(input);
    const parsed = ZSetupRecipeSchema.safeParse(recipe);
    if (!parsed.success) {
      const fieldErrors = recipeFieldErrorsOf(parsed.error.issues, recipe);
      return { ok: false, error: `Nothing saved. ${summaryOf(fieldErrors)}`, fieldErrors };
    }
    const result = await setRepositorySetup({ db: await getDb() }, { name: input.repository, recipe: parsed.data, actorId: actor.userId });
    revalidatePath(PAGE, "page");
    return {
      ok: true,
      message: `Recipe saved (${result.recipe!.kind}, recipe ${recipeDigest(result.recipe!).slice(0, 12)}). The next task, or "Build bundle now", builds its bundle.`,
    };
  },
});

export const clearSetupRecipeAction = withActorAction({
  action: "repository.manage",
  schema: z.object({ repository: ZRepositoryName }),
  handler: async ({ actor, input }) => {
    await setRepositorySetup({ db: await getDb() }, { name: input.repository, recipe: null, actorId: actor.userId });
    revalidatePath(PAGE, "page");
    return { ok: true, message: "Dependency setup removed: tasks get the repository alone." };
  },
});

/** Runs the trusted setup on a builder guest in this request (seconds on the local substrate; at most the recipe's timeout). */
export const buildBundleNowAction = withActorAction({
  action: "repository.manage",
  schema: z.object({ repository: ZRepositoryName, isForced: z.enum(["true"]).optional() }),
  handler: async ({ actor, input }) => {
    const { db, env, substrate, readyTimeoutMs } = await getRunContext();
    const result = await buildRepositoryBundle(
      { db, env, substrate, readyTimeoutMs },
      { name: input.repository, isForced: input.isForced === "true", actorId: actor.userId },
    );
    revalidatePath(PAGE, "page");
    const what = `bundle ${result.bundle.artifactDigest.slice(0, 12)} (${result.bundle.packageCount} packages) for ${result.sha.slice(0, 12)}`;
    return {
      ok: true,
      message: result.isReused ? `Already built: ${what}; reused.` : `Built ${what} in ${(result.elapsedMs / 1000).toFixed(1)} s.`,
    };
  },
});

/** The separate, audited operator decision: a bundle from a candidate's own lockfile (never used by its trusted checks). */
export const rebuildFromCandidateAction = withActorAction({
  action: "repository.manage",
  schema: z.object({ candidateId: z.string().trim().min(1, "Choose a candidate.").max(100) }),
  handler: async ({ actor, input }) => {
    const { db, env, substrate, readyTimeoutMs } = await getRunContext();
    const bundle = await rebuildFromCandidateLockfile(
      { db, env, substrate, readyTimeoutMs },
      { candidateId: input.candidateId, actorId: actor.userId },
    );
    revalidatePath(PAGE, "page");
    return {
      ok: true,
      message: `Built bundle ${bundle.artifactDigest.slice(0, 12)} (${bundle.packageCount} packages) from candidate ${input.candidateId}'s lockfile.`,
    };
  },
});
