/** The operator's agent profiles page (`/operator/agents`): every profile, the built-in ones first, each with its current version's dependency bundle state. */
import type { Actor } from "../../contract/actor";
import { listAgentProfilesWithDependencies } from "../../dependencies/agent-dependency-state";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readAgentsPage(deps: TPageDeps, input: { actor: Actor }) {
  assertMayRead(input.actor, "agent.manage");
  return { profiles: await listAgentProfilesWithDependencies({ db: deps.db }) };
}
