/** The operator's new-attempts page (`/operator/tasks/new-attempts`): the repositories and the agent profiles to hand one issue to. */
import type { Actor } from "../../contract/actor";
import { listTargetRepositories } from "../../repos/target-repositories";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readNewAttemptsPage(deps: TPageDeps, input: { actor: Actor }) {
  assertMayRead(input.actor, "task.create");
  const { db } = deps;
  const [repositories, profiles] = await Promise.all([
    listTargetRepositories({ db }),
    db.agentProfile.findMany({ orderBy: { name: "asc" }, select: { name: true, owner: true }, take: 500 }),
  ]);
  return { repositories, profiles };
}
