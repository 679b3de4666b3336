/**
 * The machine cap holds for everything that can add a machine (issue 16, item 3), under the same
 * lock as admission: a builder an operator asked for claims a free slot or is refused with
 * MACHINE_CAP_REACHED and changes nothing; an operator's re-verification and a retry from
 * `imported` are never refused — they wait in `imported`, ahead of new tasks and builders, and
 * start the verifier once a machine is free. Real PostgreSQL; "two workers" are two clients with
 * their own pools.
 */
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type { Actor } from "../contract/actor";
import { createDb, type Db } from "../db/client";
import { admitNextTask } from "../lifecycle/admit-task";
import { writeSetting } from "../settings/operator-settings";
import { retryTask } from "../lifecycle/retry-task";
import { createTestDatabase } from "../testing/test-database";
import { taskRow } from "../testing/task-row";
import { reverifyTask } from "../verify/reverify-task";
import { recordMachineIntent } from "./guest-machines";
import { startVerificationIfMachineFree } from "../verify/run-verification";
import { countMachineSlots, countMachinesInUse, readSlotWait } from "./machine-slots";

const SUBSTRATE = "local";

describe("the machine cap outside admission", async () => {
  const { db, url } = await createTestDatabase();
  const other = createDb(url);
  afterAll(() => other.$disconnect());
  const operatorUser = await db.user.create({
    data: { email: "slots-operator@example.test", name: "Operator", passwordHash: "x", roles: ["operator"] },
  });
  const operator: Actor = { userId: operatorUser.id, email: operatorUser.email, roles: ["operator"] };
  const repository = await db.targetRepository.create({ data: { name: "demo/slots", cloneUrl: "file:///nowhere" } });

  async function task(
    state: "queued" | "provisioning" | "review_pending" | "blocked",
    options: { openCandidate?: boolean } = {},
  ) {
    const created = await db.task.create({ data: taskRow(repository.id, { state }) });
    if (options.openCandidate) {
      const digest = randomUUID().replace(/-/g, "").padEnd(64, "0");
      await db.artifact.create({ data: { digest, sizeBytes: 1n, kind: "candidate-archive" } });
      await db.candidate.create({
        data: {
          id: `cand-${randomUUID()}`,
          taskId: created.id,
          issueNumber: 1,
          repository: repository.name,
          baseRef: "main",
          baseSha: "a".repeat(40),
          headSha: "b".repeat(40),
          branch: "schoolcore/1",
          changedFiles: [],
          diffDigest: "c".repeat(64),
          archiveDigest: digest,
          fileDigests: {},
        },
      });
    }
    return created.id;
  }

  /** Each case starts with no slot in use and the given cap. */
  async function start(maxMachines: number) {
    await db.guestMachine.updateMany({ data: { state: "destroyed" } });
    await db.task.updateMany({ data: { state: "failed" } });
    await writeSetting(
      { db },
      {
        key: "machines.concurrency",
        value: { maxMachines, bySubstrate: {} },
        actor: null,
        reason: "test setup",
      },
    );
  }

  const builderIntent = (client: Db) =>
    recordMachineIntent(client, {
      purpose: "builder",
      operationId: randomUUID(),
      substrateLabel: SUBSTRATE,
      spec: {
        source: { type: "image", reference: "x" },
        resources: { cpus: 1, memoryMb: 256, diskGb: 1 },
        network: { mode: "blocked" },
        ttlSeconds: 60,
      },
      needsFreeSlot: { what: "the dependency build" },
    });

  it("a re-verification is never refused at the cap: it waits in `imported`, ahead of new tasks, and starts once a machine frees", async () => {
    await start(1);
    const busy = await task("provisioning");
    const waiting = await task("review_pending");
    const queued = await task("queued");
    await reverifyTask({ db }, { actor: operator, taskId: waiting });
    expect((await db.task.findUniqueOrThrow({ where: { id: waiting } })).state).toBe("imported");
    expect(await db.auditLog.count({ where: { action: "task.reverify", targetId: waiting } })).toBe(1);
    // Over the cap in slots (the verifier it waits for), never in machines.
    expect([await countMachineSlots(db, SUBSTRATE), await countMachinesInUse(db, SUBSTRATE)]).toEqual([2, 1]);
    expect(await readSlotWait(db, SUBSTRATE, { state: "imported", probeRunId: null })).toEqual({
      inUse: 1,
      cap: 1,
      counts: "machines",
    });

    expect(
      await startVerificationIfMachineFree({ db, substrateLabel: SUBSTRATE }, { id: waiting, probeRunId: null }),
    ).toBe(false);
    expect((await db.task.findUniqueOrThrow({ where: { id: waiting } })).state).toBe("imported");

    await db.task.update({ where: { id: busy }, data: { state: "failed" } });
    // The machine is free, but the re-verification holds the slot: the queued task still waits.
    expect(await admitNextTask({ db, substrateLabel: SUBSTRATE })).toMatchObject({
      kind: "at_capacity",
      inFlight: 1,
      cap: 1,
    });
    expect(await readSlotWait(db, SUBSTRATE, { state: "queued", probeRunId: null })).toEqual({
      inUse: 1,
      cap: 1,
      counts: "slots",
    });
    expect(await readSlotWait(db, SUBSTRATE, { state: "imported", probeRunId: null })).toBeNull();
    expect(
      await startVerificationIfMachineFree({ db, substrateLabel: SUBSTRATE }, { id: waiting, probeRunId: null }),
    ).toBe(true);
    const started = await db.task.findUniqueOrThrow({
      where: { id: waiting },
      include: { transitions: { orderBy: { id: "desc" }, take: 1 } },
    });
    expect(started.state).toBe("verifying");
    expect(started.transitions[0]!.reason).toBe("trusted verification scheduled (1 of 1 machines on local)");
    expect((await db.task.findUniqueOrThrow({ where: { id: queued } })).state).toBe("queued");
  });

  it("a retry from `imported` is never refused at the cap either; a retry to `queued` waits for admission", async () => {
    await start(1);
    await task("provisioning");
    const withCandidate = await task("blocked", { openCandidate: true });
    const withoutCandidate = await task("blocked");
    expect(await retryTask({ db }, { taskId: withCandidate, reason: "try again", actor: null })).toMatchObject({
      to: "imported",
      attempt: 1,
    });
    expect(
      await startVerificationIfMachineFree({ db, substrateLabel: SUBSTRATE }, { id: withCandidate, probeRunId: null }),
    ).toBe(false);

    expect(await retryTask({ db }, { taskId: withoutCandidate, reason: "try again", actor: null })).toMatchObject({
      to: "queued",
    });
    expect(await admitNextTask({ db, substrateLabel: SUBSTRATE })).toMatchObject({
      kind: "at_capacity",
      inFlight: 2,
      cap: 1,
    });
  });

  it("a qualification probe's task starts its checks over the cap, as its admission did", async () => {
    await start(1);
    await task("provisioning");
    const probeTask = await db.task.create({ data: taskRow(repository.id, { state: "imported" }) });
    const run = await db.probeRun.create({
      data: { probes: ["P1"], substrate: SUBSTRATE, configDigest: "d".repeat(64), config: {} },
    });
    await db.task.update({ where: { id: probeTask.id }, data: { probeRunId: run.id } });
    expect(
      await startVerificationIfMachineFree({ db, substrateLabel: SUBSTRATE }, { id: probeTask.id, probeRunId: run.id }),
    ).toBe(true);
  });

  it("a builder an operator asked for needs a free slot; no machine row is written when it is refused", async () => {
    await start(1);
    await task("provisioning");
    const before = await db.guestMachine.count();
    await expect(builderIntent(db)).rejects.toMatchObject({ code: "MACHINE_CAP_REACHED" });
    expect(await db.guestMachine.count()).toBe(before);
  });

  it("admission and builders racing for the last two slots take exactly two", async () => {
    await start(2);
    const queued = await Promise.all(Array.from({ length: 4 }, () => task("queued")));
    const outcomes = await Promise.allSettled([
      ...queued.map((_, i) => admitNextTask({ db: i % 2 ? other : db, substrateLabel: SUBSTRATE })),
      ...[db, other, db, other].map((client) => builderIntent(client)),
    ]);
    const taken = outcomes.filter(
      (o) => o.status === "fulfilled" && (o.value as { kind?: string } | undefined)?.kind !== "at_capacity",
    );
    const refused = outcomes.filter((o) => o.status === "rejected");
    expect(taken).toHaveLength(2);
    expect(refused.every((o) => (o as PromiseRejectedResult).reason.code === "MACHINE_CAP_REACHED")).toBe(true);
    expect(await countMachineSlots(db, SUBSTRATE)).toBe(2);
  });

  it("verifications waiting in `imported` take the two free machines before any admission or builder racing them", async () => {
    await start(2);
    const queued = await Promise.all(Array.from({ length: 4 }, () => task("queued")));
    const reviews = await Promise.all(Array.from({ length: 2 }, () => task("review_pending")));
    const blocked = await Promise.all(Array.from({ length: 2 }, () => task("blocked", { openCandidate: true })));
    // Re-verifications and retries are all accepted, whatever the cap: four tasks now wait in `imported`.
    await Promise.all([
      ...reviews.map((taskId, i) => reverifyTask({ db: i % 2 ? other : db }, { actor: operator, taskId })),
      ...blocked.map((taskId, i) => retryTask({ db: i % 2 ? db : other }, { taskId, reason: "race", actor: null })),
    ]);
    const imported = [...reviews, ...blocked];
    const outcomes = await Promise.allSettled([
      ...imported.map((id, i) =>
        startVerificationIfMachineFree({ db: i % 2 ? other : db, substrateLabel: SUBSTRATE }, { id, probeRunId: null }),
      ),
      ...queued.map((_, i) => admitNextTask({ db: i % 2 ? other : db, substrateLabel: SUBSTRATE })),
      ...[db, other].map((client) => builderIntent(client)),
    ]);
    const verifications = outcomes.slice(0, imported.length).map((o) => (o as PromiseFulfilledResult<boolean>).value);
    expect(verifications.filter(Boolean)).toHaveLength(2);
    expect(
      outcomes
        .slice(imported.length, imported.length + queued.length)
        .map((o) => (o as PromiseFulfilledResult<{ kind: string }>).value.kind),
    ).toEqual(queued.map(() => "at_capacity"));
    expect(
      outcomes.slice(imported.length + queued.length).map((o) => (o as PromiseRejectedResult).reason.code),
    ).toEqual(["MACHINE_CAP_REACHED", "MACHINE_CAP_REACHED"]);
    expect(await db.task.count({ where: { state: "verifying" } })).toBe(2);
    expect(await countMachinesInUse(db, SUBSTRATE)).toBe(2);
  });
});
