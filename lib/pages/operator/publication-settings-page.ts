/** The operator's publication settings page (`/operator/publication`): its setting panels. */
import { assertMayRead, type TPageDeps } from "../page-deps";
import { readSettingPanels } from "../setting-panels";
import type { Actor } from "../../contract/actor";

export async function readPublicationSettingsPage(deps: TPageDeps, input: { actor: Actor }) {
  assertMayRead(input.actor, "publish.manage");
  return { settingPanels: await readSettingPanels(deps, { page: "/operator/publication" }) };
}
