import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../contract/actor";
import { DEFAULT_GUEST_IMAGE } from "../../sidecars/local-substrate/default-guest-image";
import { destroyMachine, ensureMachineCreated, recordMachineIntent } from "./guest-machines";
import { releaseQuarantine } from "./release-quarantine";
import { createLifecycleWorld, type LifecycleWorld } from "../lifecycle/testing/lifecycle-fixture";

let world: LifecycleWorld;
let operatorId: string;
let operator: Actor;
const SPEC = {
  source: { type: "smolmachine" as const, reference: DEFAULT_GUEST_IMAGE },
  resources: { cpus: 1, memoryMb: 256, diskGb: 1 },
  network: { mode: "blocked" as const },
  ttlSeconds: 600,
};

beforeAll(async () => {
  world = await createLifecycleWorld();
  operatorId = (
    await world.db.user.create({
      data: { email: "op@test.school", name: "Op", roles: ["operator"], passwordHash: "x" },
    })
  ).id;
  operator = { userId: operatorId, email: "op@test.school", roles: ["operator"] };
});

async function quarantinedMachine() {
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
  await world.substrate.admin("POST", "/admin/faults", { verb: "delete", kind: "http500", count: 3 });
  const final = await destroyMachine(world.db, world.adapter, machine.id, "test");
  expect(final.state).toBe("cleanup_quarantined");
  return final;
}

describe("quarantine release", () => {
  it("needs a reason, retries the destroy first, and records who released it and why", async () => {
    const machine = await quarantinedMachine();
    await expect(
      releaseQuarantine(
        { db: world.db, substrate: world.adapter },
        { machineId: machine.id, reason: "", actor: operator },
      ),
    ).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
    expect(await world.liveAtProvider()).toBe(1);
    const released = await releaseQuarantine(
      { db: world.db, substrate: world.adapter },
      { machineId: machine.id, reason: "provider outage is over", actor: operator },
    );
    expect(released.state).toBe("destroyed");
    expect(await world.liveAtProvider()).toBe(0);
    const record = await world.db.quarantineRecord.findUniqueOrThrow({ where: { machineId: machine.id } });
    expect(record).toMatchObject({ releasedById: operatorId, releaseReason: "provider outage is over" });
    expect(record.releasedAt).not.toBeNull();
  });

  it("stays quarantined when the retried destroy fails again", async () => {
    const machine = await quarantinedMachine();
    await world.substrate.admin("POST", "/admin/faults", { verb: "delete", kind: "http500", count: 1 });
    await expect(
      releaseQuarantine(
        { db: world.db, substrate: world.adapter },
        { machineId: machine.id, reason: "try again", actor: operator },
      ),
    ).rejects.toMatchObject({ code: "SUBSTRATE_FAILED" });
    expect((await world.db.guestMachine.findUniqueOrThrow({ where: { id: machine.id } })).state).toBe(
      "cleanup_quarantined",
    );
    await releaseQuarantine(
      { db: world.db, substrate: world.adapter },
      { machineId: machine.id, reason: "second try", actor: operator },
    );
    expect(await world.liveAtProvider()).toBe(0);
  });
});
