/**
 * The operator sets (or clears) a repository's dependency setup recipe and the registries it may
 * reach (issue 18). Audited with the before and after; the next task (or `repo bundle build`)
 * builds a bundle for the new recipe, since the recipe's digest is part of the bundle's key.
 */
import type { z } from "zod";
import { recordAudit } from "../audit";
import { actorIdOf, type Actor } from "../contract/actor";
import type { Db } from "../db/client";
import { Prisma } from "../db/generated/client";
import { parseOrThrow } from "../parse-or-throw";
import { getTargetRepositoryOrThrow } from "../repos/target-repositories";
import { recipeDigest, ZSetupRecipeSchema, type TSetupRecipe } from "./recipes";

export async function setRepositorySetup(
  deps: { db: Db },
  input: { name: string; recipe: z.input<typeof ZSetupRecipeSchema> | null; actor: Actor | null },
): Promise<{ recipe: TSetupRecipe | null; recipeDigest: string | null }> {
  const { db } = deps;
  const recipe =
    input.recipe === null
      ? null
      : parseOrThrow(ZSetupRecipeSchema, input.recipe, { code: "VALIDATION_FAILED", label: "setup recipe" });
  const repo = await getTargetRepositoryOrThrow({ db }, { name: input.name });
  await db.$transaction(async (tx) => {
    await tx.targetRepository.update({
      where: { id: repo.id },
      data: { setupRecipe: recipe === null ? Prisma.DbNull : (recipe as object) },
    });
    await recordAudit(tx, {
      actorId: actorIdOf(input.actor),
      action: "repository.setup-recipe",
      targetType: "repository",
      targetId: repo.id,
      detail: {
        name: repo.name,
        before: (repo.setupRecipe ?? null) as object | null,
        after: recipe as object | null,
      } as never,
    });
  });
  return { recipe, recipeDigest: recipe ? recipeDigest(recipe) : null };
}
