/**
 * A machine the provider lost (a provider restart, an outage) is recorded `destroyed` when the
 * provider's own get AND list both show it gone; it stays `cleanup_quarantined` when either
 * view cannot be read — unknown is never read as gone (issue 17).
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_GUEST_IMAGE } from "../../sidecars/local-substrate/default-guest-image";
import { createLifecycleWorld, type LifecycleWorld } from "../lifecycle/testing/lifecycle-fixture";
import { destroyMachine, ensureMachineCreated, recordMachineIntent } from "./guest-machines";

let world: LifecycleWorld;
const SPEC = {
  source: { type: "smolmachine" as const, reference: DEFAULT_GUEST_IMAGE },
  resources: { cpus: 1, memoryMb: 256, diskGb: 1 },
  network: { mode: "blocked" as const },
  ttlSeconds: 600,
};

beforeAll(async () => {
  world = await createLifecycleWorld();
});

/** A machine we recorded as created, deleted behind our back at the provider. */
async function vanishedMachine() {
  const machine = await ensureMachineCreated(
    world.db,
    world.adapter,
    await recordMachineIntent(world.db, {
      purpose: "probe",
      operationId: randomUUID(),
      substrateLabel: "local",
      spec: SPEC,
    }),
    SPEC,
  );
  expect((await world.substrate.api("DELETE", `/v1/machines/${machine.providerId}`)).status).toBeLessThan(300);
  return machine;
}

describe("destroying a machine the provider no longer knows", () => {
  it("records it destroyed when the provider's get and list both show it gone", async () => {
    const machine = await vanishedMachine();
    const final = await destroyMachine(world.db, world.adapter, machine.id, "test");
    expect(final.state).toBe("destroyed");
    expect(final.lastError ?? "").not.toMatch(/quarantine/);
    const transitions = await world.db.machineTransition.findMany({
      where: { machineId: machine.id },
      orderBy: { id: "asc" },
    });
    expect(transitions.at(-1)!.reason).toMatch(/get and list both show machine .* gone/);
    expect(await world.db.quarantineRecord.findUnique({ where: { machineId: machine.id } })).toBeNull();
  });

  it("quarantines it when the provider's list cannot be read (unknown is not gone)", async () => {
    const machine = await vanishedMachine();
    await world.substrate.admin("POST", "/admin/faults", { verb: "list", kind: "http500", count: 1 });
    const final = await destroyMachine(world.db, world.adapter, machine.id, "test");
    expect(final.state).toBe("cleanup_quarantined");
    await world.substrate.admin("DELETE", "/admin/faults");
  });

  it("quarantines it when the provider's get cannot be read", async () => {
    const machine = await vanishedMachine();
    await world.substrate.admin("POST", "/admin/faults", { verb: "get", kind: "http500", count: 1 });
    const final = await destroyMachine(world.db, world.adapter, machine.id, "test");
    expect(final.state).toBe("cleanup_quarantined");
    await world.substrate.admin("DELETE", "/admin/faults");
  });
});
