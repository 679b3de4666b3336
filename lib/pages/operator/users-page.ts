/** The operator's users page (`/operator/users`): every account, without secrets. */
import type { Actor } from "../../auth/permissions";
import { listUsers } from "../../auth/users";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readUsersPage(deps: TPageDeps, input: { actor: Actor }) {
  assertMayRead(input.actor, "user.manage");
  return { users: await listUsers({ db: deps.db }) };
}
