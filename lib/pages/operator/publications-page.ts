/** The operator's publications page (`/operator/publications`): publications needing attention, and whether this actor may act on them. */
import { can } from "../../auth/permissions";
import type { Actor } from "../../contract/actor";
import { listPublicationQueue } from "../../publish/list-publication-queue";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readPublicationsPage(deps: TPageDeps, input: { actor: Actor }) {
  assertMayRead(input.actor, "operator.view");
  return { items: await listPublicationQueue({ db: deps.db }), canManage: can(input.actor, "publish.manage") };
}
