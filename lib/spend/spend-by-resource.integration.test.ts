/**
 * Machine and model spend shown apart (issue 25), on real PostgreSQL with ledger rows written as
 * the spend guard and the model-spend settlement write them: the overview splits every day,
 * repository and task by resource and attributes a capability's settlement to the month of its
 * reservation (as the monthly ceiling does), the ledger filters by resource, and the CSV names
 * each row's resource and relay capability.
 */
import { randomBytes, randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../db/client";
import { recordMachineIntent } from "../machines/guest-machines";
import { createTestDatabase } from "../testing/test-database";
import { taskRow } from "../testing/task-row";
import { listSpendLedger, spendLedgerCsv } from "./list-spend-ledger";
import { readSpendOverview } from "./read-spend-overview";
import { committedInWindow } from "./spend-guard";
import { monthWindowOf } from "./spend-month";

let db: Db;
let taskId: string;
let capabilityId: string;
let openCapabilityId: string;

async function capability(modelReservedMicros: bigint): Promise<string> {
  const row = await db.relayCapability.create({
    data: {
      taskId,
      handleHash: randomBytes(32).toString("hex"),
      allowedOps: ["chat"],
      maxRequests: 10,
      maxBytes: 100_000n,
      maxRequestBytes: 10_000,
      maxResponseBytes: 10_000,
      maxTokens: 50_000n,
      inputMicrosPerMTok: 3_000_000,
      outputMicrosPerMTok: 15_000_000,
      modelReservedMicros,
      deadlineAt: new Date("2033-06-30T00:00:00Z"),
    },
  });
  return row.id;
}

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  const repo = await db.targetRepository.create({ data: { name: "demo/model-spend", cloneUrl: "/nowhere" } });
  taskId = (await db.task.create({ data: taskRow(repo.id, { issueNumber: 25, issueTitle: "tokens" }) })).id;
  const machine = await recordMachineIntent(db, {
    taskId,
    purpose: "student",
    operationId: randomUUID(),
    substrateLabel: "local",
    spec: {
      source: { type: "smolmachine", reference: "x" },
      resources: { cpus: 1, memoryMb: 512, diskGb: 1 },
      network: { mode: "blocked" },
      ttlSeconds: 60,
    },
  });
  capabilityId = await capability(0n);
  openCapabilityId = await capability(300_000n);
  const on = (iso: string) => new Date(iso);
  await db.spendLedgerEntry.createMany({
    data: [
      {
        kind: "reservation",
        resource: "machine",
        amountMicros: 1_000_000n,
        machineId: machine.id,
        taskId,
        createdAt: on("2033-06-03T10:00:00Z"),
      },
      {
        kind: "release",
        resource: "machine",
        amountMicros: 1_000_000n,
        machineId: machine.id,
        taskId,
        createdAt: on("2033-06-03T11:00:00Z"),
      },
      {
        kind: "usage",
        resource: "machine",
        amountMicros: 400_000n,
        machineId: machine.id,
        taskId,
        createdAt: on("2033-06-03T11:00:00Z"),
      },
      {
        kind: "reservation",
        resource: "model",
        amountMicros: 750_000n,
        relayCapabilityId: capabilityId,
        taskId,
        createdAt: on("2033-06-03T10:00:01Z"),
      },
      // settled in July: still June's spend, the month its reservation was made
      {
        kind: "release",
        resource: "model",
        amountMicros: 750_000n,
        relayCapabilityId: capabilityId,
        taskId,
        createdAt: on("2033-07-01T00:10:00Z"),
      },
      {
        kind: "usage",
        resource: "model",
        amountMicros: 120_000n,
        relayCapabilityId: capabilityId,
        taskId,
        createdAt: on("2033-07-01T00:10:00Z"),
      },
      {
        kind: "reservation",
        resource: "model",
        amountMicros: 300_000n,
        relayCapabilityId: openCapabilityId,
        taskId,
        createdAt: on("2033-06-10T09:00:00Z"),
      },
    ],
  });
});

describe("spend by resource", () => {
  it("the overview splits each day, repository and task into machine and model spend, in the month of the reservation", async () => {
    const june = await readSpendOverview({ db, now: () => new Date("2033-06-20T00:00:00Z") });
    expect(june.days.find((d) => d.day === "2033-06-03")).toEqual({
      day: "2033-06-03",
      committedMicros: 520_000,
      machineMicros: 400_000,
      modelMicros: 120_000,
      cumulativeMicros: 520_000,
    });
    expect(june.days.find((d) => d.day === "2033-06-10")).toMatchObject({
      machineMicros: 0,
      modelMicros: 300_000,
      cumulativeMicros: 820_000,
    });
    expect(june.monthMachineMicros).toBe(400_000);
    expect(june.monthModelMicros).toBe(420_000);
    // the chart's total agrees with what the monthly ceiling counts
    expect(june.monthMachineMicros + june.monthModelMicros).toBe(
      await committedInWindow(db, monthWindowOf(new Date("2033-06-20T00:00:00Z"))),
    );
    expect(june.perTask).toEqual([
      { taskId, label: "#25 tokens", committedMicros: 820_000, machineMicros: 400_000, modelMicros: 420_000 },
    ]);
    expect(june.perRepository).toEqual([
      { repository: "demo/model-spend", committedMicros: 820_000, machineMicros: 400_000, modelMicros: 420_000 },
    ]);
    expect(june.lifetime).toMatchObject({ machineMicros: 400_000, modelMicros: 420_000 });
    expect(june.projected).toMatchObject({ openCapabilities: 1, modelReservedMicros: 300_000 });
    const july = await readSpendOverview({ db, now: () => new Date("2033-07-20T00:00:00Z") });
    expect(july.monthModelMicros).toBe(0);
  });

  it("the ledger filters by resource and its CSV names each row's resource and relay capability", async () => {
    const model = await listSpendLedger({ db }, { resource: "model" });
    expect(model.total).toBe(4);
    expect(new Set(model.items.map((e) => e.resource))).toEqual(new Set(["model"]));
    expect(model.items.every((e) => e.taskId === taskId && e.machine === null)).toBe(true);
    expect(model.items.map((e) => e.relayCapabilityId).sort()).toEqual(
      [capabilityId, capabilityId, capabilityId, openCapabilityId].sort(),
    );
    const machine = await listSpendLedger({ db }, { resource: "machine", kind: "usage" });
    expect(machine.items).toMatchObject([{ resource: "machine", amountMicros: 400_000, relayCapabilityId: null }]);

    const csv = spendLedgerCsv(model.items).trim().split("\n");
    expect(csv[0]).toBe(
      "id,created_at,kind,resource,amount_micros,amount_usd,task_id,repository,issue,machine,relay_capability_id,note",
    );
    expect(csv).toHaveLength(5);
    for (const line of csv.slice(1))
      expect(line).toMatch(new RegExp(`^"\\d+","[^"]+","\\w+","model",.*,"demo/model-spend","25","",".{36}",`));
    expect(csv.join("\n")).toContain(`"${openCapabilityId}"`);
    await expect(listSpendLedger({ db }, { resource: "gpu" as never })).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });
  });
});
