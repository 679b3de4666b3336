/** The operator's agent profiles page (`/operator/agents`): every profile, the built-in ones first. */
import { listAgentProfiles } from "../../agents/agent-profiles.repo";
import type { Actor } from "../../auth/permissions";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readAgentsPage(deps: TPageDeps, input: { actor: Actor }) {
  assertMayRead(input.actor, "agent.manage");
  return { profiles: await listAgentProfiles({ db: deps.db }) };
}
