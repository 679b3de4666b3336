/**
 * "Destroyed" is observed, not believed: a machine is gone when the provider's get says so (404)
 * and its list no longer names it — not merely because a delete answered 204.
 */
import type { Substrate } from "../substrate/substrate";

export async function observeMachinesGone(
  substrate: Substrate,
  providerIds: string[],
): Promise<{ isGone: boolean; stillListed: string[]; stillGettable: string[] }> {
  const listed = new Set((await substrate.listMachines()).filter((m) => m.state !== "deleted").map((m) => m.id));
  const stillGettable: string[] = [];
  for (const id of providerIds) {
    const machine = await substrate.get(id);
    if (machine && machine.state !== "deleted") stillGettable.push(id);
  }
  const stillListed = providerIds.filter((id) => listed.has(id));
  return { isGone: stillListed.length === 0 && stillGettable.length === 0, stillListed, stillGettable };
}
