"use server";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { withActorAction } from "@/app/_server/action";
import { getDb } from "@/lib/db/client";
import { addTargetRepository, ZAddTargetRepositorySchema } from "@/lib/repos/target-repositories";
import { setRepositoryDisabled, ZSetRepositoryDisabledSchema } from "@/lib/repos/set-repository-disabled";
import {
  setRepositoryProtectedPaths,
  ZSetRepositoryProtectedPathsSchema,
} from "@/lib/repos/set-repository-protected-paths";

export const addRepositoryAction = withActorAction({
  action: "repository.manage",
  schema: ZAddTargetRepositorySchema.extend({
    defaultBranch: z.preprocess((v) => (v === "" ? undefined : v), ZAddTargetRepositorySchema.shape.defaultBranch),
  }),
  handler: async ({ actor, input }) => {
    const repo = await addTargetRepository({ db: await getDb() }, { ...input, actor });
    revalidatePath("/operator/repositories");
    return { ok: true, message: `${repo.name} added.` };
  },
});

export const setRepositoryDisabledAction = withActorAction({
  action: "repository.manage",
  schema: ZSetRepositoryDisabledSchema,
  handler: async ({ actor, input }) => {
    const repo = await setRepositoryDisabled(
      { db: await getDb() },
      { ...input, isDisabled: input.isDisabled ? "true" : "false", actor },
    );
    revalidatePath("/operator/repositories");
    return { ok: true, message: `${repo.name} is ${repo.isDisabled ? "disabled" : "enabled"}.` };
  },
});

export const setProtectedPathsAction = withActorAction({
  action: "repository.manage",
  schema: ZSetRepositoryProtectedPathsSchema,
  handler: async ({ actor, input }) => {
    await setRepositoryProtectedPaths({ db: await getDb() }, { ...input, actor });
    revalidatePath("/operator/repositories");
    return { ok: true, message: "Protected publication paths saved." };
  },
});
