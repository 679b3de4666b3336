/** The operator's settings index (`/operator/settings`): the dispatch gate (re-proved at this read) and whether the actor may toggle it. */
import { can } from "../../auth/permissions";
import type { Actor } from "../../contract/actor";
import { readDispatchGate } from "../../probes/read-dispatch-gate";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readSettingsPage(deps: TPageDeps, input: { actor: Actor }) {
  assertMayRead(input.actor, "limits.edit");
  return { dispatch: await readDispatchGate(deps), canToggle: can(input.actor, "dispatch.toggle") };
}
