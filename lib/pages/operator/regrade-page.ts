/** The operator's regrade page (`/operator/repositories/[id]/regrade`): the repository and the summary of its last regrade. */
import type { Actor } from "../../contract/actor";
import { AppError } from "../../errors";
import { readRegradeSummary } from "../../verify/regrade-repository";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readRegradePage(deps: TPageDeps, input: { actor: Actor; repositoryId: string }) {
  assertMayRead(input.actor, "task.reverify");
  const { db } = deps;
  const repository = /^[0-9a-f-]{36}$/i.test(input.repositoryId)
    ? await db.targetRepository.findUnique({ where: { id: input.repositoryId } })
    : null;
  if (!repository) throw new AppError("NOT_FOUND", "No such repository.");
  return { repository, summary: await readRegradeSummary({ db }, { repositoryId: repository.id }) };
}
