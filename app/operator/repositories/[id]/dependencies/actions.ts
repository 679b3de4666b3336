"use server";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { withActorAction } from "@/app/_server/action";
import { summaryOf } from "@/app/_server/field-errors";
import { getDb } from "@/lib/db/client";
import { cancelBundleBuildRequest, requestBundleBuild } from "@/lib/dependencies/bundle-build-requests";
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
    const result = await setRepositorySetup(
      { db: await getDb() },
      { name: input.repository, recipe: parsed.data, actor },
    );
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
    await setRepositorySetup({ db: await getDb() }, { name: input.repository, recipe: null, actor });
    revalidatePath(PAGE, "page");
    return { ok: true, message: "Dependency setup removed: tasks get the repository alone." };
  },
});

/** Queues the build; a worker runs it on a builder guest (waiting while every machine slot is in use) and this page follows it. */
export const buildBundleNowAction = withActorAction({
  action: "repository.manage",
  schema: z.object({ repository: ZRepositoryName, isForced: z.enum(["true"]).optional() }),
  handler: async ({ actor, input }) => {
    const { request, isExisting } = await requestBundleBuild(
      { db: await getDb() },
      { kind: "base", repository: input.repository, isForced: input.isForced === "true", actor },
    );
    revalidatePath(PAGE, "page");
    return { ok: true, message: queuedMessage(request.state, isExisting) };
  },
});

/** The separate, audited operator decision: a bundle from a candidate's own lockfile (never used by its trusted checks). */
export const rebuildFromCandidateAction = withActorAction({
  action: "repository.manage",
  schema: z.object({ candidateId: z.string().trim().min(1, "Choose a candidate.").max(100) }),
  handler: async ({ actor, input }) => {
    const { request, isExisting } = await requestBundleBuild(
      { db: await getDb() },
      { kind: "candidate", candidateId: input.candidateId, actor },
    );
    revalidatePath(PAGE, "page");
    return { ok: true, message: queuedMessage(request.state, isExisting) };
  },
});

/** Withdraws a build: a queued one never starts; a running one is stopped by its worker and its builder destroyed. */
export const cancelBuildRequestAction = withActorAction({
  action: "repository.manage",
  schema: z.object({ requestId: z.uuid("Not a build request.") }),
  handler: async ({ actor, input }) => {
    const { from } = await cancelBundleBuildRequest({ db: await getDb() }, { requestId: input.requestId, actor });
    revalidatePath(PAGE, "page");
    return {
      ok: true,
      message:
        from === "running"
          ? "Build cancelled: its worker stops it within seconds and destroys the builder."
          : "Build request cancelled: nothing was built.",
    };
  },
});

function queuedMessage(state: string, isExisting: boolean): string {
  if (isExisting) return `The same build is already ${state}; it is shown under "Build requests" below.`;
  return `Build queued: a worker runs it on a builder guest, and "Build requests" below follows it.`;
}
