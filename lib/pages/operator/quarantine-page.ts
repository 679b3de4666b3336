/** The operator's quarantine page (`/operator/quarantine`): one page of quarantined machines; a page number that is not one is page 1. */
import type { Actor } from "../../contract/actor";
import { listQuarantinedMachines } from "../../machines/list-quarantined-machines";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readQuarantinePage(deps: TPageDeps, input: { actor: Actor; page?: string | undefined }) {
  assertMayRead(input.actor, "machine.manage");
  const page = Math.max(1, Number(input.page) || 1);
  return listQuarantinedMachines({ db: deps.db }, { page });
}
