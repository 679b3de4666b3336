/** The operator's candidate page (`/operator/candidates/[id]`): the candidate's manifest and artifact, and whether the actor may re-prove it. */
import { can } from "../../auth/permissions";
import { getCandidateView } from "../../candidate/get-candidate-view";
import type { Actor } from "../../contract/actor";
import { AppError } from "../../errors";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readCandidatePage(deps: TPageDeps, input: { actor: Actor; candidateId: string }) {
  assertMayRead(input.actor, "operator.view");
  const view = await getCandidateView({ db: deps.db }, { candidateId: input.candidateId });
  if (!view) throw new AppError("NOT_FOUND", "No such candidate.");
  return { view, canReprove: can(input.actor, "candidate.reprove") };
}
