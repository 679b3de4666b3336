/**
 * Admin API against a real substrate: every fault kind on a verb, TTL fast-forward with an
 * injected clock, metered billing and the usage report, hard vs soft budget, orphan checks.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_GUEST_IMAGE } from "./default-guest-image";
import { startTestSubstrate, type TTestSubstrate } from "./testing/local-substrate-fixture";

const SOURCE = { type: "smolmachine", reference: DEFAULT_GUEST_IMAGE };
const HOUR_MS = 3_600_000;

let sub: TTestSubstrate;
let manualNow = Date.parse("2026-10-04T10:00:00.000Z");

beforeAll(async () => {
  sub = await startTestSubstrate({
    clock: { now: () => manualNow },
    readinessDelayMs: 0,
    hangCapMs: 1500,
    billing: {
      rateCpuHourMicros: 40_000,
      rateMemoryGbHourMicros: 8_000,
      prepaidCreditMicros: 1_000_000,
      budgetPolicy: "soft",
    },
  });
});

afterAll(async () => {
  await sub?.cleanup();
});

async function createMachine(body: Record<string, unknown> = {}): Promise<string> {
  const created = await sub.api("POST", "/v1/machines", { source: SOURCE, network: { mode: "blocked" }, ...body });
  expect(created.status).toBe(201);
  return (created.json as { id: string }).id;
}

async function inject(spec: Record<string, unknown>) {
  const result = await sub.admin("POST", "/admin/faults", spec);
  expect(result.status).toBe(201);
}

describe("faults", () => {
  it("http500 fails the next N calls of a verb without doing them, then stops", async () => {
    await inject({ verb: "create", kind: "http500", count: 2 });
    const before = ((await sub.admin("GET", "/admin/machines")).json as { machineCount: number }).machineCount;
    for (let i = 0; i < 2; i++) {
      const failed = await sub.api("POST", "/v1/machines", { source: SOURCE, network: { mode: "blocked" } });
      expect(failed.status).toBe(500);
      expect(failed.requestId).toMatch(/^req-/);
      expect(failed.json).toEqual({ error: expect.any(String), code: "INTERNAL_ERROR" });
    }
    expect(((await sub.admin("GET", "/admin/machines")).json as { machineCount: number }).machineCount).toBe(before);
    const id = await createMachine();
    await sub.api("DELETE", `/v1/machines/${id}`);
  });

  it("phase after does the operation and loses the answer (an ambiguous create)", async () => {
    await inject({ verb: "create", kind: "http500", phase: "after" });
    const failed = await sub.api("POST", "/v1/machines", {
      name: "ambiguous",
      source: SOURCE,
      network: { mode: "blocked" },
    });
    expect(failed.status).toBe(500);
    const listed = (await sub.api("GET", "/v1/machines")).json as { id: string; name: string }[];
    const orphan = listed.find((m) => m.name === "ambiguous");
    expect(orphan).toBeDefined();
    expect((await sub.api("DELETE", `/v1/machines/${orphan!.id}`)).status).toBe(204);
  });

  it("status answers the given code and body verbatim, JSON or plain text", async () => {
    await inject({ verb: "account", kind: "status", status: 429, body: "slow down", contentType: "text/plain" });
    const text = await sub.api("GET", "/v1/account");
    expect(text).toMatchObject({ status: 429, text: "slow down", contentType: "text/plain" });
    expect(text.requestId).toMatch(/^req-/);
    await inject({ verb: "account", kind: "status", status: 402, body: { message: "payment required" } });
    expect(await sub.api("GET", "/v1/account")).toMatchObject({ status: 402, json: { message: "payment required" } });
    expect((await sub.api("GET", "/v1/account")).status).toBe(200);
  });

  it("malformed_json answers 200 with a body that does not parse", async () => {
    const id = await createMachine();
    await inject({ verb: "get", kind: "malformed_json" });
    const result = await sub.api("GET", `/v1/machines/${id}`);
    expect(result.status).toBe(200);
    expect(result.contentType).toBe("application/json");
    expect(() => JSON.parse(result.text)).toThrow();
    await sub.api("DELETE", `/v1/machines/${id}`);
  });

  it("oversized_body answers with 5 MiB of JSON-ish junk", async () => {
    await inject({ verb: "list", kind: "oversized_body" });
    const result = await sub.api("GET", "/v1/machines");
    expect(result.status).toBe(200);
    expect(result.text.length).toBeGreaterThanOrEqual(5 * 1024 * 1024);
  });

  it("reset destroys the connection", async () => {
    const id = await createMachine();
    await inject({ verb: "delete", kind: "reset" });
    await expect(sub.api("DELETE", `/v1/machines/${id}`)).rejects.toThrow();
    expect((await sub.api("DELETE", `/v1/machines/${id}`)).status).toBe(204);
  });

  it("hang never answers: the client gives up, and the server drops it after the cap", async () => {
    await inject({ verb: "account", kind: "hang", count: 2 });
    const gaveUp = fetch(`${sub.url}/v1/account`, {
      headers: { authorization: `Bearer ${sub.token}` },
      signal: AbortSignal.timeout(200),
    });
    await expect(gaveUp).rejects.toThrow(/abort|timeout/i);
    const started = Date.now();
    await expect(sub.api("GET", "/v1/account")).rejects.toThrow();
    const held = Date.now() - started;
    expect(held).toBeGreaterThanOrEqual(1400);
    expect(held).toBeLessThan(4000);
  });

  it("faults cover upload and download too", async () => {
    const id = await createMachine();
    await sub.api("POST", `/v1/machines/${id}/start`);
    await inject({ verb: "upload", kind: "status", status: 503, body: { error: "busy", code: "UNAVAILABLE" } });
    const upload = await fetch(`${sub.url}/v1/machines/${id}/files/tmp/x`, {
      method: "PUT",
      headers: { authorization: `Bearer ${sub.token}` },
      body: "data",
    });
    expect(upload.status).toBe(503);
    await inject({ verb: "download", kind: "http500", phase: "after" });
    await fetch(`${sub.url}/v1/machines/${id}/files/tmp/x`, {
      method: "PUT",
      headers: { authorization: `Bearer ${sub.token}` },
      body: "data",
    });
    expect((await sub.api("GET", `/v1/machines/${id}/files/tmp/x`)).status).toBe(500);
    expect((await sub.api("GET", `/v1/machines/${id}/files/tmp/x`)).text).toBe("data");
    await sub.api("DELETE", `/v1/machines/${id}`);
  });

  it("lists, clears and validates faults", async () => {
    await inject({ verb: "exec", kind: "http500", count: 3 });
    expect(
      ((await sub.admin("GET", "/admin/faults")).json as { faults: { verb: string; remaining: number }[] }).faults,
    ).toContainEqual(expect.objectContaining({ verb: "exec", remaining: 3 }));
    expect((await sub.admin("DELETE", "/admin/faults")).json).toEqual({ cleared: 1 });
    expect(((await sub.admin("GET", "/admin/faults")).json as { faults: unknown[] }).faults).toEqual([]);
    expect((await sub.admin("POST", "/admin/faults", { verb: "reboot", kind: "http500" })).status).toBe(400);
    expect((await sub.admin("POST", "/admin/faults", { verb: "get", kind: "status" })).status).toBe(400);
  });
});

describe("TTL and billing on the injected clock", () => {
  it("deletes a machine ttlSeconds after creation when the clock is fast-forwarded, killing it and removing its root", async () => {
    const id = await createMachine({ ttlSeconds: 60 });
    await sub.api("POST", `/v1/machines/${id}/start`);
    expect((await sub.exec(id, { command: "sleep 300", background: true })).status).toBe(200);
    const advanced = await sub.admin("POST", "/admin/clock/advance", { seconds: 59 });
    expect((advanced.json as { deleted: string[] }).deleted).toEqual([]);
    expect((await sub.api("GET", `/v1/machines/${id}`)).status).toBe(200);
    const swept = await sub.admin("POST", "/admin/clock/advance", { seconds: 1 });
    expect((swept.json as { deleted: string[] }).deleted).toEqual([id]);
    expect((await sub.api("GET", `/v1/machines/${id}`)).status).toBe(404);
    const snapshot = (await sub.admin("GET", "/admin/machines")).json as {
      machines: { id: string }[];
      leftoverRoots: string[];
      pendingCleanups: number;
    };
    expect(snapshot.machines.map((m) => m.id)).not.toContain(id);
    expect(snapshot.leftoverRoots).toEqual([]);
    expect(snapshot.pendingCleanups).toBe(0);
  });

  it("a machine past its TTL is 404 even before the sweeper runs", async () => {
    const id = await createMachine({ ttlSeconds: 5 });
    manualNow += 5_000;
    expect((await sub.api("GET", `/v1/machines/${id}`)).status).toBe(404);
    expect((await sub.api("GET", "/v1/machines")).json).not.toContainEqual(expect.objectContaining({ id }));
  });

  it("bills per machine-second at the plan rates and reports usage on DELETE ?includeUsage=true", async () => {
    const before = (await sub.api("GET", "/v1/account")).json as {
      prepaidCreditMicros: number;
      periodCost: { totalMicros: number };
    };
    const id = await createMachine({ resources: { cpus: 2, memoryMb: 1024 } });
    manualNow += HOUR_MS;
    const report = await sub.api("DELETE", `/v1/machines/${id}?includeUsage=true`);
    expect(report.status).toBe(200);
    expect(report.json).toEqual({
      machineId: id,
      from: expect.any(String),
      to: expect.any(String),
      usage: { totalUptimeSeconds: 3600, cpuHours: 2, memoryGbHours: 1, diskGbHours: 0, egressGb: 0, execCount: 0 },
      cost: {
        cpuMicros: 80_000,
        memoryMicros: 8_000,
        execMicros: 0,
        diskMicros: 0,
        egressMicros: 0,
        baseMicros: 0,
        totalMicros: 88_000,
        amountDueMicros: 88_000,
      },
    });
    const after = (await sub.api("GET", "/v1/account")).json as {
      prepaidCreditMicros: number;
      periodCost: { totalMicros: number };
      budgetRemainingMicros: null;
    };
    expect(after.periodCost.totalMicros - before.periodCost.totalMicros).toBe(88_000);
    expect(before.prepaidCreditMicros - after.prepaidCreditMicros).toBe(88_000);
    expect(after.budgetRemainingMicros).toBeNull();
  });

  it("reports budget headroom under a hard policy and refuses creates once it is spent", async () => {
    const hard = (await sub.admin("PATCH", "/admin/account", { budgetPolicy: "hard", prepaidCreditMicros: 50_000 }))
      .json as {
      budgetRemainingMicros: number;
      prepaidCreditMicros: number;
      plan: { budgetPolicy: string };
    };
    expect(hard.plan.budgetPolicy).toBe("hard");
    expect(hard.prepaidCreditMicros).toBe(50_000);
    expect(hard.budgetRemainingMicros).toBe(50_000);
    const id = await createMachine({ resources: { cpus: 1, memoryMb: 1024 } });
    manualNow += 2 * HOUR_MS; // 2 × (40_000 + 8_000) = 96_000 > 50_000
    const spent = (await sub.api("GET", "/v1/account")).json as {
      budgetRemainingMicros: number;
      prepaidCreditMicros: number;
      periodCost: { amountDueMicros: number };
    };
    expect(spent.budgetRemainingMicros).toBe(0);
    expect(spent.prepaidCreditMicros).toBe(0);
    const refused = await sub.api("POST", "/v1/machines", { source: SOURCE, network: { mode: "blocked" } });
    expect(refused.status).toBe(422);
    expect(refused.json).toMatchObject({ code: "QUOTA_EXCEEDED" });
    await sub.api("DELETE", `/v1/machines/${id}`);
    await sub.admin("PATCH", "/admin/account", { budgetPolicy: "soft", prepaidCreditMicros: 1_000_000 });
  });

  it("only moves the clock forward", async () => {
    expect((await sub.admin("POST", "/admin/clock/advance", { seconds: -1 })).status).toBe(400);
    const clock = (await sub.admin("GET", "/admin/clock")).json as { nowMs: number; offsetMs: number };
    expect(clock.nowMs).toBe(manualNow + clock.offsetMs);
  });
});

describe("admin", () => {
  it("needs its own token", async () => {
    expect((await fetch(`${sub.adminUrl}/admin/health`)).status).toBe(401);
    const health = await sub.admin("GET", "/admin/health");
    expect(health.json).toMatchObject({
      status: "ok",
      url: sub.url,
      limitsMode: { pids: expect.any(String), memory: expect.any(String) },
    });
    expect(health.requestId).toMatch(/^req-/);
  });

  it("leaves no machine, process or root behind once everything is deleted", async () => {
    for (const machine of (await sub.api("GET", "/v1/machines")).json as { id: string }[])
      await sub.api("DELETE", `/v1/machines/${machine.id}`);
    expect((await sub.admin("GET", "/admin/machines")).json).toMatchObject({
      machineCount: 0,
      runningCommandCount: 0,
      pendingCleanups: 0,
      leftoverRoots: [],
      cleanupFailures: [],
    });
  });
});
