/** The operator's dependencies page of one repository (`/operator/repositories/[id]/dependencies`): its setup recipe, bundles, runs and build requests. */
import type { Actor } from "../../contract/actor";
import { getRepositoryDependencies } from "../../dependencies/get-repository-dependencies";
import { AppError } from "../../errors";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readRepositoryDependenciesPage(deps: TPageDeps, input: { actor: Actor; repositoryId: string }) {
  assertMayRead(input.actor, "repository.manage");
  // The id comes from the URL: one that is not a uuid names no repository (and never reaches a uuid column).
  if (!/^[0-9a-f-]{36}$/i.test(input.repositoryId)) throw new AppError("NOT_FOUND", "No such repository.");
  return { view: await getRepositoryDependencies({ db: deps.db }, { repositoryId: input.repositoryId }) };
}
