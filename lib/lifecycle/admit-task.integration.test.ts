/**
 * Admission under the operator's machine cap and in fair order across repositories, on real
 * PostgreSQL. "Two workers" are two database clients with their own connection pools admitting at
 * the same time, as two worker processes do; the real-process race is in
 * lib/jobs/two-workers.integration.test.ts.
 */
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { createDb } from "../db/client";
import { writeSetting } from "../settings/operator-settings";
import { createTestDatabase } from "../testing/test-database";
import { taskRow } from "../testing/task-row";
import { transitionTask } from "../tasks/transition-task";
import { admitNextTask, admitQueuedTask } from "./admit-task";
import { countMachineSlots } from "../machines/machine-slots";

describe("admission to provisioning", async () => {
  const { db, url } = await createTestDatabase();
  const other = createDb(url);
  afterAll(() => other.$disconnect());
  let clock = Date.parse("2026-01-01T00:00:00Z");

  async function queue(repository: string, count: number): Promise<string[]> {
    const repo = await db.targetRepository.upsert({
      where: { name: repository },
      update: {},
      create: { name: repository, cloneUrl: "file:///nowhere" },
    });
    const ids: string[] = [];
    for (let i = 0; i < count; i++) {
      const task = await db.task.create({
        data: taskRow(repo.id, { issueNumber: i + 1, createdAt: new Date((clock += 1000)) }),
      });
      ids.push(task.id);
    }
    return ids;
  }

  async function finish(taskId: string) {
    const path = ["provisioning", "running", "collecting", "imported", "verifying", "review_pending"] as const;
    for (let i = 0; i + 1 < path.length; i++) await transitionTask(db, { taskId, from: path[i]!, to: path[i + 1]! });
  }

  /** Each case starts with nothing queued or in flight (the transition log is append-only, so earlier tasks are parked as failed). */
  async function reset() {
    await db.guestMachine.updateMany({ data: { state: "destroyed" } });
    await db.task.updateMany({ data: { state: "failed" } });
  }

  async function setCap(maxMachines: number | null, bySubstrate: Record<string, number> = {}) {
    await writeSetting(
      { db },
      {
        key: "machines.concurrency",
        value: { maxMachines, bySubstrate },
        actor: null,
        reason: "test setup",
      },
    );
  }

  it("two workers racing for the last slots never pass the cap", async () => {
    await reset();
    await setCap(3);
    await queue("demo/race", 30);
    const race = (client: typeof db, count = 15) =>
      Array.from({ length: count }, () => admitNextTask({ db: client, substrateLabel: "local" }));
    const results = await Promise.all([...race(db), ...race(other)]);
    expect(results.filter((r) => r.kind === "admitted")).toHaveLength(3);
    expect(results.filter((r) => r.kind === "at_capacity").length).toBe(27);
    expect(await db.task.count({ where: { state: "provisioning" } })).toBe(3);
    expect(await countMachineSlots(db, "local")).toBe(3);

    // One slot frees; the next race admits exactly one more.
    const [first] = await db.task.findMany({ where: { state: "provisioning" }, take: 1 });
    await finish(first!.id);
    const again = await Promise.all([...race(db, 5), ...race(other, 5)]);
    expect(again.filter((r) => r.kind === "admitted")).toHaveLength(1);
    expect(
      await db.task.count({
        where: { state: { in: ["provisioning", "running", "collecting", "imported", "verifying"] } },
      }),
    ).toBe(3);
  });

  it("counts live machines that no admitted task accounts for, per substrate; a per-substrate cap overrides the default", async () => {
    await reset();
    await setCap(2, { hosted: 5 });
    await queue("demo/leftovers", 3);
    // A probe's machine (no task) still live on the local substrate takes a slot; one on another substrate does not.
    const machine = (substrate: string) => ({
      purpose: "student" as const,
      state: "ready" as const,
      providerName: `sc-${randomUUID()}`,
      substrate,
      imageRef: "x",
      resources: {},
      ttlSeconds: 60,
      operationId: randomUUID(),
    });
    await db.guestMachine.create({ data: machine("local") });
    await db.guestMachine.create({ data: machine("hosted") });
    expect(await countMachineSlots(db, "local")).toBe(1);
    expect((await admitNextTask({ db, substrateLabel: "local" })).kind).toBe("admitted");
    expect(await admitNextTask({ db, substrateLabel: "local" })).toMatchObject({
      kind: "at_capacity",
      inFlight: 2,
      cap: 2,
    });
    // the same queue on the "hosted" substrate: its own cap (5) and its own leftover machine
    expect(await admitNextTask({ db, substrateLabel: "hosted" })).toMatchObject({
      kind: "admitted",
      inFlight: 3,
      cap: 5,
    });
  });

  it("a task driven directly waits at the cap; a qualification probe's task is admitted over it", async () => {
    await reset();
    await setCap(1);
    const [a, b, c] = await queue("demo/direct", 3);
    expect((await admitQueuedTask({ db, substrateLabel: "local" }, { taskId: a!, isProbeTask: false })).kind).toBe(
      "admitted",
    );
    expect((await admitQueuedTask({ db, substrateLabel: "local" }, { taskId: b!, isProbeTask: false })).kind).toBe(
      "at_capacity",
    );
    expect((await db.task.findUniqueOrThrow({ where: { id: b! } })).state).toBe("queued");
    expect((await admitQueuedTask({ db, substrateLabel: "local" }, { taskId: c!, isProbeTask: true })).kind).toBe(
      "admitted",
    );
  });

  it("a skewed queue: one repository's 200 queued tasks do not starve another's", async () => {
    await reset();
    await setCap(2);
    const flood = await queue("class/flood", 200);
    const [lone] = await queue("class/lone", 1);
    const order: string[] = [];
    const admitOne = async () => {
      const result = await admitNextTask({ db, substrateLabel: "local" });
      if (result.kind === "admitted") order.push(result.taskId);
      return result;
    };
    await admitOne();
    await admitOne();
    expect(order).toEqual([flood[0], lone]);
    expect((await admitOne()).kind).toBe("at_capacity");
    // as slots free, the flood goes on in its own order
    await finish(flood[0]!);
    await admitOne();
    expect(order[2]).toBe(flood[1]);
  });

  it("without a cap, admission takes turns across repositories, oldest head first", async () => {
    await reset();
    await setCap(null);
    const a = await queue("class/a", 40);
    const b = await queue("class/b", 3);
    const c = await queue("class/c", 1);
    const order: string[] = [];
    for (let i = 0; i < 9; i++) {
      const result = await admitNextTask({ db, substrateLabel: "local" });
      if (result.kind === "admitted") order.push(result.taskId);
    }
    expect(order).toEqual([a[0], b[0], c[0], a[1], b[1], a[2], b[2], a[3], a[4]]);
  });
});
