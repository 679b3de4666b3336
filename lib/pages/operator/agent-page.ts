/**
 * The operator's page of one agent profile (`/operator/agents/[name]`): the profile with its
 * versions, each with where its dependency bundle stands, the current one, its environment as the
 * edit form's text (`KEY=value` lines), and — when it names a guest image of its own — whether
 * that image is qualified now (it runs only once a probe run qualified it,
 * lib/probes/image-qualification.ts).
 */
import { can } from "../../auth/permissions";
import type { Actor } from "../../contract/actor";
import { getAgentProfileWithDependencies } from "../../dependencies/agent-dependency-state";
import { readProfileImageQualification } from "../../probes/image-qualification";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readAgentPage(deps: TPageDeps, input: { actor: Actor; name: string }) {
  assertMayRead(input.actor, "agent.manage");
  const profile = await getAgentProfileWithDependencies({ db: deps.db }, { name: input.name });
  const image = await readProfileImageQualification(deps, { profile: profile.name });
  const current = profile.versions.find((v) => v.version === profile.currentVersion)!;
  const environmentText = Object.entries(current.environment as Record<string, string>)
    .map(([k, v]) => `${k}=${v}`)
    .join("\n");
  return { profile, current, environmentText, image, canRunProbes: can(input.actor, "probe.run") };
}
