/**
 * Destroy is observed, not assumed (issue 12, item 12), against the real local substrate with its
 * "ignored" fault: a provider that answers 204 to DELETE and keeps the machine. Such a machine is
 * never recorded destroyed; it ends `cleanup_quarantined` with a visible record, and the orphan
 * sweep quarantines a machine recorded gone that it finds again instead of deleting it forever.
 */
import { randomUUID } from "node:crypto";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_GUEST_IMAGE } from "../../sidecars/local-substrate/default-guest-image";
import { createLifecycleWorld, type LifecycleWorld } from "../lifecycle/testing/lifecycle-fixture";
import { destroyMachine, ensureMachineCreated, recordMachineIntent } from "./guest-machines";
import { releaseQuarantine } from "./release-quarantine";
import { sweepMachines } from "./sweep-machines";
import { transitionMachine } from "./transition-machine";

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

afterEach(async () => {
  await world.substrate.admin("DELETE", "/admin/faults");
});

async function createdMachine() {
  return ensureMachineCreated(
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
}

async function keepDeletes(count: number) {
  expect(
    (await world.substrate.admin("POST", "/admin/faults", { verb: "delete", kind: "ignored", count })).status,
  ).toBeLessThan(300);
}

async function isAtProvider(providerId: string): Promise<boolean> {
  return (await world.substrate.api("GET", `/v1/machines/${providerId}`)).status === 200;
}

describe("a destroy the provider acknowledges but does not do", () => {
  it("is quarantined, visibly, not recorded destroyed", async () => {
    const machine = await createdMachine();
    await keepDeletes(10);
    const final = await destroyMachine(world.db, world.adapter, machine.id, "task ended");
    expect(final.state).toBe("cleanup_quarantined");
    expect(final.lastError).toMatch(/acknowledged 3 delete\(s\) but the machine is still there/);
    expect(await world.db.quarantineRecord.findUnique({ where: { machineId: machine.id } })).toMatchObject({
      providerId: machine.providerId,
      releasedAt: null,
    });
    expect(await isAtProvider(machine.providerId!)).toBe(true);

    // an operator's release is observed the same way: still there → still quarantined
    const operator = await world.db.user.create({
      data: { email: `op-${randomUUID()}@test.school`, name: "O", roles: ["operator"], passwordHash: "x" },
    });
    await expect(
      releaseQuarantine(
        { db: world.db, substrate: world.adapter },
        {
          actor: { userId: operator.id, email: operator.email, roles: ["operator"] },
          machineId: machine.id,
          reason: "try again",
        },
      ),
    ).rejects.toMatchObject({ code: "SUBSTRATE_FAILED" });
    expect((await world.db.guestMachine.findUniqueOrThrow({ where: { id: machine.id } })).state).toBe(
      "cleanup_quarantined",
    );
    await world.substrate.admin("DELETE", "/admin/faults");
    expect(
      await releaseQuarantine(
        { db: world.db, substrate: world.adapter },
        {
          actor: { userId: operator.id, email: operator.email, roles: ["operator"] },
          machineId: machine.id,
          reason: "the delete works now",
        },
      ),
    ).toMatchObject({ state: "destroyed" });
    expect(await isAtProvider(machine.providerId!)).toBe(false);
  });

  it("is recorded destroyed once a retried delete is seen to take effect", async () => {
    const machine = await createdMachine();
    await keepDeletes(1);
    const final = await destroyMachine(world.db, world.adapter, machine.id, "task ended");
    expect(final.state).toBe("destroyed");
    expect(await isAtProvider(machine.providerId!)).toBe(false);
  });
});

describe("the orphan sweep", () => {
  it("quarantines a machine recorded destroyed that the provider shows again, and does not delete it again", async () => {
    const machine = await createdMachine();
    // recorded destroyed (an earlier delete believed), yet still at the provider
    await transitionMachine(world.db, {
      machineId: machine.id,
      from: "created",
      to: "destroyed",
      reason: "an earlier delete",
    });
    const deletesBefore = world.ctx.substrate.calls.filter((c) => c.method === "destroy").length;
    await sweepMachines(world.ctx, { graceMs: 0 });
    const row = await world.db.guestMachine.findUniqueOrThrow({ where: { id: machine.id } });
    expect(row.state).toBe("cleanup_quarantined");
    expect(row.lastError).toMatch(/at the provider again although it was recorded destroyed/);
    expect(await world.db.quarantineRecord.findUnique({ where: { machineId: machine.id } })).not.toBeNull();
    expect(world.ctx.substrate.calls.filter((c) => c.method === "destroy").length).toBe(deletesBefore);
    // the next sweep leaves it to the operator
    await sweepMachines(world.ctx, { graceMs: 0 });
    expect((await world.db.guestMachine.findUniqueOrThrow({ where: { id: machine.id } })).state).toBe(
      "cleanup_quarantined",
    );
    await world.substrate.api("DELETE", `/v1/machines/${machine.providerId}`);
  });

  it("adopts a provider machine under our name with no record; one whose delete is not honoured ends quarantined", async () => {
    const id = randomUUID();
    const created = await world.substrate.api("POST", "/v1/machines", {
      name: `sc-probe-${id}`,
      source: { type: "smolmachine", reference: DEFAULT_GUEST_IMAGE },
      network: { mode: "blocked" },
      resources: { cpus: 1, memoryMb: 256 },
    });
    expect(created.status).toBeLessThan(300);
    const providerId = (created.json as { id: string }).id;
    await keepDeletes(10);
    await sweepMachines(world.ctx, { graceMs: 0 });
    const row = await world.db.guestMachine.findUniqueOrThrow({ where: { id } });
    expect(row).toMatchObject({ state: "cleanup_quarantined", providerId, providerName: `sc-probe-${id}` });
    expect(await isAtProvider(providerId)).toBe(true);
    await world.substrate.admin("DELETE", "/admin/faults");
    await world.substrate.api("DELETE", `/v1/machines/${providerId}`);
  });
});
