/** The operator's limits page (`/operator/limits`): its setting panels (task limits, guest images, the agent command, rounds, machine cap, anonymous review). */
import { assertMayRead, type TPageDeps } from "../page-deps";
import { readSettingPanels } from "../setting-panels";
import type { Actor } from "../../contract/actor";

export async function readLimitsPage(deps: TPageDeps, input: { actor: Actor }) {
  assertMayRead(input.actor, "limits.edit");
  return { settingPanels: await readSettingPanels(deps, { page: "/operator/limits" }) };
}
