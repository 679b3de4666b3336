/**
 * The SmolCloud adapter against the local substrate over real HTTP (issue 3, "Done when"):
 * the full lifecycle, findings A–D, the spend ceiling under concurrency, and every injected
 * fault on every verb ending in a typed error with the machine destroyed or quarantined and
 * no orphan left at the provider.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../../db/client";
import { destroyMachine, ensureMachineCreated, recordMachineIntent, startMachine } from "../../machines/guest-machines";
import { writeSetting } from "../../settings/operator-settings";
import { withSpendGuard, type TClosableSubstrate } from "../../spend/spend-guarded-substrate";
import { createSpendGuard } from "../../spend/spend-guard";
import { createTestDatabase } from "../../testing/test-database";
import { DEFAULT_GUEST_IMAGE } from "../../../sidecars/local-substrate/default-guest-image";
import {
  startTestSubstrate,
  type TTestSubstrate,
} from "../../../sidecars/local-substrate/testing/local-substrate-fixture";
import type { TMachineSpec } from "../substrate";
import { isSubstrateError, SubstrateError } from "../substrate-error";
import { SmolCloudSubstrate } from "./smolcloud-substrate";
import { taskRow } from "../../testing/task-row";

const SPEC: Omit<TMachineSpec, "name"> = {
  source: { type: "smolmachine", reference: DEFAULT_GUEST_IMAGE },
  resources: { cpus: 1, memoryMb: 512, diskGb: 1 },
  network: { mode: "blocked" },
  ttlSeconds: 3600,
};
// local billing: 50 000 µ$/cpu-hour + 10 000 µ$/GB-hour × 0.5 GB, for one hour
const RESERVATION = 55_000;

let substrate: TTestSubstrate;
let db: Db;
let tokenFile: string;
let adapter: TClosableSubstrate;

function makeAdapter(options: { onLowBalance?: (h: number) => void } = {}) {
  return withSpendGuard(
    new SmolCloudSubstrate({
      baseUrl: substrate.url,
      tokenFile,
      label: "local",
      timeouts: { controlMs: 1500, execGraceMs: 1500, transferMs: 3000 },
    }),
    {
      spendGuard: createSpendGuard(db),
      fallbackRates: async () => ({ cpuHourMicros: 0, memoryGbHourMicros: 0 }),
      onLowBalance: options.onLowBalance,
    },
  );
}

async function liveAtProvider(): Promise<number> {
  const result = await substrate.admin("GET", "/admin/machines");
  return (result.json as { machineCount: number }).machineCount;
}

async function intent(taskId?: string) {
  return recordMachineIntent(db, {
    taskId,
    purpose: "probe",
    operationId: randomUUID(),
    substrateLabel: "local",
    spec: SPEC,
  });
}

async function newTask(): Promise<string> {
  const repo = await db.targetRepository.upsert({
    where: { name: "demo/adapter" },
    create: { name: "demo/adapter", cloneUrl: "/nowhere" },
    update: {},
  });
  const task = await db.task.create({ data: taskRow(repo.id) });
  return task.id;
}

/** The lifecycle a task runs, with the failure path the lifecycle takes: destroy on any error. */
async function runLifecycle(): Promise<{ error: unknown; machineState: string }> {
  let machine = await intent();
  let error: unknown;
  try {
    machine = await ensureMachineCreated(db, adapter, machine, SPEC);
    machine = await startMachine(db, adapter, machine, 5000);
    await adapter.upload(machine.providerId!, "/tmp/in.txt", Buffer.from("hello from the control plane"));
    const exec = await adapter.exec(
      machine.providerId!,
      { command: ["sh", "-c", "tr a-z A-Z < /tmp/in.txt > /tmp/out.txt; cat /tmp/out.txt"], timeoutSeconds: 5 },
      { maxOutputBytes: 4096 },
    );
    expect(exec.exitCode).toBe(0);
    expect(await adapter.downloadSmall(machine.providerId!, "/tmp/out.txt", { maxBytes: 1024 })).toEqual(
      Buffer.from("HELLO FROM THE CONTROL PLANE"),
    );
  } catch (caught) {
    error = caught;
  }
  const final = await destroyMachine(db, adapter, machine.id, error ? "failure path" : "done");
  return { error, machineState: final.state };
}

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  // The vendor's routes only, as the hosted API serves them: this file proves the adapter against
  // that contract (its polling included); the local long poll has its own tests (local-extensions.integration.test.ts).
  substrate = await startTestSubstrate({ hangCapMs: 9000, hasExtensions: false });
  tokenFile = path.join(await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-token-")), "token");
  await fs.writeFile(tokenFile, substrate.token + "\n", { mode: 0o600 });
  await writeSetting(
    { db },
    {
      key: "spend.ceilings",
      value: { globalMicros: 1_000_000_000, perTaskMicros: 1_000_000_000 },
      actor: null,
      reason: "test setup",
    },
  );
  adapter = makeAdapter();
});

afterAll(async () => {
  await adapter?.close();
  await substrate?.cleanup();
});

describe("SmolCloud adapter over HTTP", () => {
  it("runs the full lifecycle: create, start, ready, upload, exec, download, destroy with a usage report", async () => {
    const { error, machineState } = await runLifecycle();
    expect(error).toBeUndefined();
    expect(machineState).toBe("destroyed");
    expect(await liveAtProvider()).toBe(0);
    const account = await db.spendAccount.findUniqueOrThrow({ where: { scope: "global" } });
    expect(account.reservedMicros).toBe(0n);
    const usage = await db.spendLedgerEntry.findMany({ where: { kind: "usage" } });
    expect(usage.length).toBeGreaterThan(0);
  });

  it("finding A: refuses a registry image with a blocked network before any request, saying how to fix it", async () => {
    const machine = await recordMachineIntent(db, {
      purpose: "probe",
      operationId: randomUUID(),
      substrateLabel: "local",
      spec: { ...SPEC, source: { type: "image", reference: `alpine:3.21@sha256:${"c".repeat(64)}` } },
    });
    const error = await ensureMachineCreated(db, adapter, machine, {
      ...SPEC,
      source: { type: "image", reference: `alpine:3.21@sha256:${"c".repeat(64)}` },
    }).catch((e) => e);
    expect(isSubstrateError(error) && error.substrateCode).toBe("SUBSTRATE_CONFIG_REFUSED");
    expect(error.message).toMatch(/smolmachine/);
    expect(await liveAtProvider()).toBe(0);
    expect(await db.spendLedgerEntry.count({ where: { machineId: machine.id } })).toBe(0);
  });

  it("finding B: the provider's 400 body, request id and status are kept in the error, bounded and without the token", async () => {
    const created = await substrate.api("POST", "/v1/machines", {
      source: { type: "image", reference: `alpine:3.21@sha256:${"d".repeat(64)}` },
      network: { mode: "blocked" },
      resources: { cpus: 1, memoryMb: 256 },
    });
    const id = (created.json as { id: string }).id;
    const error = (await adapter.start(id).catch((e) => e)) as SubstrateError;
    expect(error).toBeInstanceOf(SubstrateError);
    expect(error.httpStatusFromProvider).toBe(400);
    expect(error.requestId).toBeTruthy();
    expect(error.providerExcerpt).toMatch(/pulled from a registry/i);
    expect(Buffer.byteLength(error.providerExcerpt!)).toBeLessThanOrEqual(2048);
    expect(error.message).not.toContain(substrate.token);
    await adapter.destroy(id);
  });

  it("finding D: a soft budget (budgetRemainingMicros null) falls back to prepaid credit; neither observable refuses before any create", async () => {
    const account = await adapter.account();
    expect(account.budgetRemainingMicros ?? null).toBeNull();
    expect(account.prepaidCreditMicros).toBeGreaterThan(0);
    await substrate.admin("POST", "/admin/faults", {
      verb: "account",
      kind: "status",
      status: 200,
      body: { tenantId: "t", status: "active", budgetRemainingMicros: null, prepaidCreditMicros: null },
    });
    const machine = await intent();
    await expect(ensureMachineCreated(db, adapter, machine, SPEC)).rejects.toMatchObject({
      code: "ACCOUNT_UNOBSERVABLE",
    });
    expect(await liveAtProvider()).toBe(0);
  });

  it("a low balance surfaces as a warning; too little headroom refuses", async () => {
    let warned: number | undefined;
    const warningAdapter = makeAdapter({ onLowBalance: (h) => (warned = h) });
    await substrate.admin("PATCH", "/admin/account", {
      prepaidCreditMicros: 100_000,
      lowBalanceThresholdMicros: 200_000,
    });
    const machine = await ensureMachineCreated(db, warningAdapter, await intent(), SPEC);
    expect(warned).toBe(100_000);
    await destroyMachine(db, warningAdapter, machine.id, "done");
    await substrate.admin("PATCH", "/admin/account", { prepaidCreditMicros: RESERVATION - 1 });
    await expect(ensureMachineCreated(db, warningAdapter, await intent(), SPEC)).rejects.toMatchObject({
      code: "SPEND_CEILING_EXCEEDED",
    });
    await substrate.admin("PATCH", "/admin/account", {
      prepaidCreditMicros: 100_000_000,
      lowBalanceThresholdMicros: 5_000_000,
    });
    await warningAdapter.close();
  });

  it("finding C: 20 concurrent creates against a ceiling that admits 5 create exactly 5 machines", async () => {
    const before = await db.spendAccount.findUniqueOrThrow({ where: { scope: "global" } });
    const committed = Number(before.reservedMicros + before.spentMicros);
    await writeSetting(
      { db },
      {
        key: "spend.ceilings",
        value: { globalMicros: committed + 5 * RESERVATION + RESERVATION / 2, perTaskMicros: 1_000_000_000 },
        actor: null,
        reason: "test setup",
      },
    );
    const machines = await Promise.all(Array.from({ length: 20 }, () => intent()));
    const results = await Promise.allSettled(machines.map((m) => ensureMachineCreated(db, adapter, m, SPEC)));
    const created = results.filter((r) => r.status === "fulfilled");
    const refused = results.filter((r) => r.status === "rejected");
    expect(created).toHaveLength(5);
    for (const r of refused)
      expect((r as PromiseRejectedResult).reason).toMatchObject({ code: "SPEND_CEILING_EXCEEDED" });
    expect(await liveAtProvider()).toBe(5);
    for (const m of machines) await destroyMachine(db, adapter, m.id, "ceiling test done");
    expect(await liveAtProvider()).toBe(0);
    await writeSetting(
      { db },
      {
        key: "spend.ceilings",
        value: { globalMicros: 1_000_000_000, perTaskMicros: 1_000_000_000 },
        actor: null,
        reason: "test setup",
      },
    );
  });

  it("the per-task ceiling refuses a task's second machine when it would go over", async () => {
    const taskId = await newTask();
    await writeSetting(
      { db },
      {
        key: "spend.ceilings",
        value: { globalMicros: 1_000_000_000, perTaskMicros: RESERVATION + 1000 },
        actor: null,
        reason: "test setup",
      },
    );
    const first = await ensureMachineCreated(db, adapter, await intent(taskId), SPEC);
    await expect(ensureMachineCreated(db, adapter, await intent(taskId), SPEC)).rejects.toMatchObject({
      code: "SPEND_CEILING_EXCEEDED",
    });
    await destroyMachine(db, adapter, first.id, "done");
    await writeSetting(
      { db },
      {
        key: "spend.ceilings",
        value: { globalMicros: 1_000_000_000, perTaskMicros: 1_000_000_000 },
        actor: null,
        reason: "test setup",
      },
    );
  });

  it("a create whose answer was lost (fault after the create) is adopted by name, not made twice", async () => {
    await substrate.admin("POST", "/admin/faults", { verb: "create", kind: "reset", phase: "after" });
    const machine = await ensureMachineCreated(db, adapter, await intent(), SPEC);
    expect(machine.state).toBe("created");
    expect(await liveAtProvider()).toBe(1);
    await destroyMachine(db, adapter, machine.id, "done");
    expect(await liveAtProvider()).toBe(0);
  });

  it("a destroy that keeps failing quarantines the machine with minimal recovery metadata", async () => {
    const machine = await ensureMachineCreated(db, adapter, await intent(), SPEC);
    await substrate.admin("POST", "/admin/faults", { verb: "delete", kind: "http500", count: 3 });
    const final = await destroyMachine(db, adapter, machine.id, "test");
    expect(final.state).toBe("cleanup_quarantined");
    const record = await db.quarantineRecord.findUniqueOrThrow({ where: { machineId: machine.id } });
    expect(record).toMatchObject({ providerId: machine.providerId, substrate: "local" });
    expect(record.reason).toMatch(/destroy failed 3 times/);
    expect(record.reason).not.toContain(substrate.token);
    // cleanup for the orphan count of later tests
    await adapter.destroy(machine.providerId!);
  });
});

const FAULT_VERBS = ["account", "list", "create", "start", "get", "upload", "exec", "download", "delete"] as const;
const FAULT_KINDS = {
  http500: "SUBSTRATE_INTERNAL",
  hang: "SUBSTRATE_TIMEOUT",
  malformed_json: "SUBSTRATE_MALFORMED_RESPONSE",
  oversized_body: "SUBSTRATE_RESPONSE_TOO_LARGE",
  reset: "SUBSTRATE_NETWORK",
} as const;

describe("every injected fault on every verb", () => {
  const cases = FAULT_VERBS.flatMap((verb) =>
    Object.entries(FAULT_KINDS).map(([kind, code]) => [verb, kind, code] as const),
  );
  it.each(cases)("%s / %s → typed error, machine destroyed or quarantined, no orphan", async (verb, kind, code) => {
    await substrate.admin("DELETE", "/admin/faults");
    // hangs outlast every client deadline; oversized bodies exceed every read cap
    await substrate.admin("POST", "/admin/faults", { verb, kind, count: 1, hangMs: 9000, bytes: 12 * 1024 * 1024 });
    const { error, machineState } = await runLifecycle();
    if (verb === "delete") {
      // the destroy is retried; one failure costs one attempt
      expect(error).toBeUndefined();
    } else {
      expect(isSubstrateError(error), `expected a SubstrateError, got ${String(error)}`).toBe(true);
      expect((error as SubstrateError).substrateCode).toBe(code);
    }
    expect(["destroyed", "failed", "cleanup_quarantined"]).toContain(machineState);
    const live = await liveAtProvider();
    expect(machineState === "cleanup_quarantined" ? live <= 1 : live === 0).toBe(true);
    const faults = await substrate.admin("GET", "/admin/faults");
    expect((faults.json as { faults: unknown[] }).faults).toHaveLength(0);
  });
});
