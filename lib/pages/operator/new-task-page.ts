/** The operator's new-task page (`/operator/tasks/new`): the repositories, the limits and their override maxima, the agent profiles. */
import { listAgentProfiles } from "../../agents/agent-profiles.repo";
import type { Actor } from "../../contract/actor";
import { listTargetRepositories } from "../../repos/target-repositories";
import { readSetting } from "../../settings/operator-settings";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readNewTaskPage(deps: TPageDeps, input: { actor: Actor }) {
  assertMayRead(input.actor, "task.create");
  const { db } = deps;
  const [repositories, limits, maxima, agents] = await Promise.all([
    listTargetRepositories({ db }),
    readSetting({ db }, { key: "task.limits" }),
    readSetting({ db }, { key: "task.overrideMaxima" }),
    listAgentProfiles({ db }),
  ]);
  return { repositories, limits, maxima, agents };
}
