/** The operator's model relay page (`/operator/relay`): its setting panels (the upstream, its price); the test call is an action. */
import { assertMayRead, type TPageDeps } from "../page-deps";
import { readSettingPanels } from "../setting-panels";
import type { Actor } from "../../contract/actor";

export async function readRelayPage(deps: TPageDeps, input: { actor: Actor }) {
  assertMayRead(input.actor, "relay.manage");
  return { settingPanels: await readSettingPanels(deps, { page: "/operator/relay" }) };
}
