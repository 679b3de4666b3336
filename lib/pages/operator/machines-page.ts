/** The operator's machines page (`/operator/machines`): the newest 200 guests and how many are quarantined (of all of them). */
import type { Actor } from "../../contract/actor";
import { listMachines } from "../../machines/list-machines";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readMachinesPage(deps: TPageDeps, input: { actor: Actor }) {
  assertMayRead(input.actor, "operator.view");
  const { db } = deps;
  // The list is the newest 200; the quarantine count covers all of them (the quarantine page lists every one).
  const [machines, quarantinedCount] = await Promise.all([
    listMachines({ db }),
    db.guestMachine.count({ where: { state: "cleanup_quarantined" } }),
  ]);
  return { machines, quarantinedCount };
}
