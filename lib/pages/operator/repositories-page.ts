/** The operator's repositories page (`/operator/repositories`): every target repository and the protected paths setting. */
import type { Actor } from "../../contract/actor";
import { listRepositoriesForOperator } from "../../repos/set-repository-disabled";
import { readSetting } from "../../settings/operator-settings";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readRepositoriesPage(deps: TPageDeps, input: { actor: Actor }) {
  assertMayRead(input.actor, "repository.manage");
  const { db } = deps;
  const [repositories, protectedPaths] = await Promise.all([
    listRepositoriesForOperator({ db }),
    readSetting({ db }, { key: "publish.protectedPaths" }),
  ]);
  return { repositories, protectedPaths };
}
