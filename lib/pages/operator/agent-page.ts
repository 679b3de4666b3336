/**
 * The operator's page of one agent profile (`/operator/agents/[name]`): the profile with its
 * versions, the current one, and its environment as the edit form's text (`KEY=value` lines).
 */
import { getAgentProfile } from "../../agents/agent-profiles.repo";
import type { Actor } from "../../auth/permissions";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readAgentPage(deps: TPageDeps, input: { actor: Actor; name: string }) {
  assertMayRead(input.actor, "agent.manage");
  const profile = await getAgentProfile({ db: deps.db }, { name: input.name });
  const current = profile.versions.find((v) => v.version === profile.currentVersion)!;
  const environmentText = Object.entries(current.environment as Record<string, string>)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n");
  return { profile, current, environmentText };
}
