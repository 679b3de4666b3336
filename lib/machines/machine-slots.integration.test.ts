/**
 * The machine cap holds for everything that can add a machine outside admission (issue 16, item
 * 3): an operator's re-verification, a retry from `imported`, and a builder an operator asked for
 * each claim a free slot under the same lock as admission, or are refused with MACHINE_CAP_REACHED
 * and change nothing. Real PostgreSQL; "two workers" are two clients with their own pools.
 */
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import type { Actor } from "../auth/permissions";
import { createDb, type Db } from "../db/client";
import { admitNextTask } from "../lifecycle/admit-task";
import { writeSetting } from "../settings/operator-settings";
import { retryTask } from "../lifecycle/retry-task";
import { createTestDatabase } from "../testing/test-database";
import { taskRow } from "../testing/task-row";
import { reverifyTask } from "../verify/reverify-task";
import { recordMachineIntent } from "./guest-machines";
import { countMachineSlots } from "./machine-slots";

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

  async function task(state: "queued" | "provisioning" | "review_pending" | "blocked", options: { openCandidate?: boolean } = {}) {
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
    await writeSetting(db, { key: "machines.concurrency", value: { maxMachines, bySubstrate: {} }, actorId: null });
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

  it("a re-verification needs a free slot: refused at the cap with nothing changed, accepted once a slot frees", async () => {
    await start(1);
    const busy = await task("provisioning");
    const waiting = await task("review_pending");
    await expect(reverifyTask({ db, substrateLabel: SUBSTRATE }, { actor: operator, taskId: waiting })).rejects.toMatchObject({
      code: "MACHINE_CAP_REACHED",
      message: expect.stringMatching(
        /^The machine cap is reached \(1 of 1 slots on local in use\), so the re-verification cannot start now; nothing was changed\./,
      ),
    });
    expect((await db.task.findUniqueOrThrow({ where: { id: waiting } })).state).toBe("review_pending");
    expect(await db.auditLog.count({ where: { action: "task.reverify", targetId: waiting } })).toBe(0);

    await db.task.update({ where: { id: busy }, data: { state: "failed" } });
    await reverifyTask({ db, substrateLabel: SUBSTRATE }, { actor: operator, taskId: waiting });
    expect((await db.task.findUniqueOrThrow({ where: { id: waiting } })).state).toBe("verifying");
    expect(await countMachineSlots(db, SUBSTRATE)).toBe(1);
  });

  it("a retry from `imported` needs a free slot; a retry to `queued` does not (admission decides later)", async () => {
    await start(1);
    await task("provisioning");
    const withCandidate = await task("blocked", { openCandidate: true });
    const withoutCandidate = await task("blocked");
    await expect(
      retryTask({ db, substrateLabel: SUBSTRATE }, { taskId: withCandidate, reason: "try again", actorId: null }),
    ).rejects.toMatchObject({ code: "MACHINE_CAP_REACHED" });
    const unchanged = await db.task.findUniqueOrThrow({ where: { id: withCandidate } });
    expect([unchanged.state, unchanged.attempt]).toEqual(["blocked", 0]);

    expect(
      await retryTask({ db, substrateLabel: SUBSTRATE }, { taskId: withoutCandidate, reason: "try again", actorId: null }),
    ).toMatchObject({
      to: "queued",
    });
    expect(await admitNextTask({ db, substrateLabel: SUBSTRATE })).toMatchObject({ kind: "at_capacity", inFlight: 1, cap: 1 });
  });

  it("a builder an operator asked for needs a free slot; no machine row is written when it is refused", async () => {
    await start(1);
    await task("provisioning");
    const before = await db.guestMachine.count();
    await expect(builderIntent(db)).rejects.toMatchObject({ code: "MACHINE_CAP_REACHED" });
    expect(await db.guestMachine.count()).toBe(before);
  });

  it("admission, re-verifications, retries and builders racing for the last two slots take exactly two", async () => {
    await start(2);
    const queued = await Promise.all(Array.from({ length: 4 }, () => task("queued")));
    const reviews = await Promise.all(Array.from({ length: 4 }, () => task("review_pending")));
    const blocked = await Promise.all(Array.from({ length: 4 }, () => task("blocked", { openCandidate: true })));
    const outcomes = await Promise.allSettled([
      ...queued.map((_, i) => admitNextTask({ db: i % 2 ? other : db, substrateLabel: SUBSTRATE })),
      ...reviews.map((taskId, i) => reverifyTask({ db: i % 2 ? other : db, substrateLabel: SUBSTRATE }, { actor: operator, taskId })),
      ...blocked.map((taskId, i) =>
        retryTask({ db: i % 2 ? db : other, substrateLabel: SUBSTRATE }, { taskId, reason: "race", actorId: null }),
      ),
      ...[db, other, db, other].map((client) => builderIntent(client)),
    ]);
    const taken = outcomes.filter((o) => o.status === "fulfilled" && (o.value as { kind?: string } | undefined)?.kind !== "at_capacity");
    const refused = outcomes.filter((o) => o.status === "rejected");
    expect(taken).toHaveLength(2);
    expect(refused.every((o) => (o as PromiseRejectedResult).reason.code === "MACHINE_CAP_REACHED")).toBe(true);
    expect(await countMachineSlots(db, SUBSTRATE)).toBe(2);
  });
});
