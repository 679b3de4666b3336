/** The operator's users page (`/operator/users`): every account, without secrets, and its setting panels (sign-in). */
import { listUsers } from "../../auth/users";
import { assertMayRead, type TPageDeps } from "../page-deps";
import { readSettingPanels } from "../setting-panels";
import type { Actor } from "../../contract/actor";

export async function readUsersPage(deps: TPageDeps, input: { actor: Actor }) {
  assertMayRead(input.actor, "user.manage");
  const [users, settingPanels] = await Promise.all([
    listUsers({ db: deps.db }),
    readSettingPanels(deps, { page: "/operator/users" }),
  ]);
  return { users, settingPanels };
}
