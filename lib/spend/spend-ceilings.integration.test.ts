/**
 * Monthly and lifetime spend ceilings on real PostgreSQL with a controlled clock: a month fills
 * up, the next reserve in the same month is refused, and the first reserve of the next month is
 * admitted without anyone editing a setting. Also: a stored value of the old (lifetime-only)
 * shape still reads, the spend overview attributes cost to the reservation's day, and the ledger
 * pages, filters and exports to CSV.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../db/client";
import { recordMachineIntent } from "../machines/guest-machines";
import { readSetting, writeSetting } from "../settings/operator-settings";
import { createTestDatabase } from "../testing/test-database";
import { listSpendLedger, spendLedgerCsv } from "./list-spend-ledger";
import { readSpendOverview } from "./read-spend-overview";
import { createSpendGuard } from "./spend-guard";

let db: Db;
let taskId: string;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  const repo = await db.targetRepository.create({ data: { name: "demo/spend", cloneUrl: "/nowhere" } });
  const task = await db.task.create({
    data: {
      repositoryId: repo.id,
      issueNumber: 7,
      issueTitle: "spend",
      prompt: "p",
      baseRef: "main",
      baseSha: "a".repeat(40),
      operationId: randomUUID(),
      limits: {},
    },
  });
  taskId = task.id;
});

async function machine(forTask: string | null = taskId) {
  const spec = {
    source: { type: "smolmachine" as const, reference: "x" },
    resources: { cpus: 1, memoryMb: 512, diskGb: 1 },
    network: { mode: "blocked" as const },
    ttlSeconds: 60,
  };
  return recordMachineIntent(db, {
    taskId: forTask ?? undefined,
    purpose: "student",
    operationId: randomUUID(),
    substrateLabel: "local",
    spec,
  });
}

describe("spend ceilings", () => {
  it("reads a stored value of the old lifetime-only shape, with no monthly ceilings", async () => {
    await db.operatorSetting.upsert({
      where: { key: "spend.ceilings" },
      create: { key: "spend.ceilings", value: { globalMicros: 5_000_000, perTaskMicros: 500_000 } },
      update: { value: { globalMicros: 5_000_000, perTaskMicros: 500_000 } },
    });
    expect(await readSetting({ db }, { key: "spend.ceilings" })).toEqual({
      globalMicros: 5_000_000,
      perTaskMicros: 500_000,
      monthlyGlobalMicros: null,
      monthlyPerTaskMicros: null,
    });
  });

  it("refuses past the monthly ceiling and admits again when the month rolls over (controlled clock)", async () => {
    await writeSetting(
      { db },
      {
        key: "spend.ceilings",
        value: {
          globalMicros: 10_000_000,
          perTaskMicros: 10_000_000,
          monthlyGlobalMicros: 1_000_000,
          monthlyPerTaskMicros: null,
        },
        actor: null,
        reason: "test setup",
      },
    );
    let now = new Date("2031-01-31T22:00:00Z");
    const guard = createSpendGuard(db, { now: () => now });
    const first = await machine();
    await guard.reserve({ machineName: first.providerName, amountMicros: 700_000 });
    const second = await machine();
    await expect(guard.reserve({ machineName: second.providerName, amountMicros: 400_000 })).rejects.toMatchObject({
      code: "SPEND_CEILING_EXCEEDED",
      message: expect.stringContaining("Monthly spend ceiling (2031-01)"),
    });
    // settling in February does not move January's cost into February
    now = new Date("2031-02-01T00:00:00Z");
    await guard.settle({ machineName: first.providerName, actualMicros: 650_000, note: "usage" });
    await guard.reserve({ machineName: second.providerName, amountMicros: 400_000 });
    const february = await readSpendOverview({ db, now: () => now });
    expect(february.month).toBe("2031-02");
    expect(february.monthCommittedMicros).toBe(400_000);
    const january = await readSpendOverview({ db, now: () => new Date("2031-01-15T00:00:00Z") });
    expect(january.monthCommittedMicros).toBe(650_000);
    expect(january.days.find((d) => d.day === "2031-01-31")).toEqual({
      day: "2031-01-31",
      committedMicros: 650_000,
      machineMicros: 650_000,
      modelMicros: 0,
      cumulativeMicros: 650_000,
    });
    expect(january.days).toHaveLength(31);
    expect(january.perTask).toEqual([
      { taskId, label: "#7 spend", committedMicros: 650_000, machineMicros: 650_000, modelMicros: 0 },
    ]);
    expect(january.perRepository).toEqual([
      { repository: "demo/spend", committedMicros: 650_000, machineMicros: 650_000, modelMicros: 0 },
    ]);
  });

  it("applies the monthly per-task ceiling to one task only", async () => {
    await writeSetting(
      { db },
      {
        key: "spend.ceilings",
        value: {
          globalMicros: 100_000_000,
          perTaskMicros: 100_000_000,
          monthlyGlobalMicros: null,
          monthlyPerTaskMicros: 500_000,
        },
        actor: null,
        reason: "test setup",
      },
    );
    const now = new Date("2031-03-10T00:00:00Z");
    const guard = createSpendGuard(db, { now: () => now });
    await guard.reserve({ machineName: (await machine()).providerName, amountMicros: 300_000 });
    await expect(
      guard.reserve({ machineName: (await machine()).providerName, amountMicros: 300_000 }),
    ).rejects.toMatchObject({
      message: expect.stringContaining("Monthly per-task"),
    });
    await guard.reserve({ machineName: (await machine(null)).providerName, amountMicros: 300_000 });
  });

  it("still enforces the lifetime ceiling", async () => {
    const committed = await db.spendAccount.findUniqueOrThrow({ where: { scope: "global" } });
    await writeSetting(
      { db },
      {
        key: "spend.ceilings",
        value: {
          globalMicros: Number(committed.reservedMicros + committed.spentMicros) + 100,
          perTaskMicros: 100_000_000,
        },
        actor: null,
        reason: "test setup",
      },
    );
    const guard = createSpendGuard(db, { now: () => new Date("2031-04-01T00:00:00Z") });
    await expect(
      guard.reserve({ machineName: (await machine()).providerName, amountMicros: 200 }),
    ).rejects.toMatchObject({
      message: expect.stringContaining("Global spend ceiling"),
    });
  });
});

describe("the spend ledger", () => {
  it("pages newest first, filters by kind and task, and exports CSV with formula-looking text neutralised", async () => {
    const all = await listSpendLedger({ db }, { pageSize: 2 });
    expect(all.total).toBeGreaterThanOrEqual(6);
    expect(all.items).toHaveLength(2);
    expect(Number(all.items[0]!.id)).toBeGreaterThan(Number(all.items[1]!.id));
    const page2 = await listSpendLedger({ db }, { pageSize: 2, page: 2 });
    expect(page2.items[0]!.id).not.toBe(all.items[0]!.id);
    const usage = await listSpendLedger({ db }, { kind: "usage", taskId });
    expect(usage.items.map((e) => e.amountMicros)).toEqual([650_000]);
    const csv = spendLedgerCsv([{ ...usage.items[0]!, note: '=HYPERLINK("x")' }]);
    expect(csv.split("\n")[0]).toBe(
      "id,created_at,kind,resource,amount_micros,amount_usd,task_id,repository,issue,machine,relay_capability_id,note",
    );
    expect(csv).toContain(`"'=HYPERLINK(""x"")"`);
    expect(csv).toContain('"0.650000"');
    await expect(listSpendLedger({ db }, { from: "not-a-date" })).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
  });
});
