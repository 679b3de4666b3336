import { describe, expect, it, vi } from "vitest";
import { pgPoolOf } from "../db/client";
import { createTestDatabase } from "../testing/test-database";
import { issueCapability } from "./issue-capability";
import { readCapabilityUsage } from "./read-capability-usage";
import { relayCall } from "./relay-call";
import { revokeCapability } from "./revoke-capability";
import { createCountingTransport, createRelayTestTask, SIMPLE_REQUEST } from "./testing/relay-fixtures";
import { hashHandle } from "./handle";

const LIMITS = {
  maxRequests: 10,
  maxBytes: 100_000,
  maxRequestBytes: 10_000,
  maxResponseBytes: 10_000,
  maxTokens: 1_000_000,
  ttlSeconds: 600,
};

describe("relayCall against real PostgreSQL", async () => {
  const { db } = await createTestDatabase();

  async function setup(limits: Partial<typeof LIMITS> = {}) {
    const { taskId } = await createRelayTestTask(db);
    const issued = await issueCapability({ db }, { taskId, ...LIMITS, ...limits });
    return { taskId, ...issued };
  }

  it("issues a 256-bit scr_ handle shown once and stores only its sha256", async () => {
    const { handle, capabilityId } = await setup();
    expect(handle).toMatch(/^scr_[A-Za-z0-9_-]{43}$/);
    const row = await db.relayCapability.findUniqueOrThrow({
      where: { id: capabilityId },
      omit: { handleHash: false },
    });
    expect(row.handleHash).toBe(hashHandle(handle));
    const dump = JSON.stringify(await db.$queryRawUnsafe(`select row_to_json(c)::text as j from "RelayCapability" c`));
    expect(dump).not.toContain(handle);
    const audit = JSON.stringify(await db.auditLog.findMany({ where: { targetId: capabilityId } }), (_k, v) =>
      typeof v === "bigint" ? String(v) : v,
    );
    expect(audit).toContain("relay.issue");
    expect(audit).not.toContain(handle);
  });

  it("closes the HTTP channel to a mailbox task's handle (its guest has no network; a leaked handle is useless there)", async () => {
    const { taskId } = await createRelayTestTask(db, undefined, "mailbox");
    const { handle } = await issueCapability({ db }, { taskId, ...LIMITS });
    const transport = createCountingTransport(() => "never");
    const result = await relayCall({
      db,
      handle,
      taskId,
      operation: "complete",
      request: SIMPLE_REQUEST,
      channel: "http",
      transport,
    });
    expect(result).toMatchObject({ status: 403, code: "RELAY_REFUSED" });
    expect(transport.inputs).toHaveLength(0);
  });

  it("answers a valid call with the completion and usage, and records counts only", async () => {
    const { taskId, handle, capabilityId } = await setup();
    const transport = createCountingTransport(() => "the secret answer text");
    const result = await relayCall({
      db,
      handle,
      taskId,
      operation: "complete",
      request: { messages: [{ role: "user", content: "the secret question text" }], maxTokens: 64 },
      channel: "http",
      transport,
    });
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({
      completion: { content: "the secret answer text" },
      usage: { requestCount: 1, maxRequests: 10, upstream: "scripted" },
    });
    expect(transport.inputs[0]).toMatchObject({ maxTokens: 64 });
    const rows = await db.relayCall.findMany({ where: { capabilityId } });
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ outcome: "ok:scripted", channel: "http", operation: "complete" });
    expect(rows[0]!.requestBytes).toBeGreaterThan(0);
    expect(rows[0]!.responseBytes).toBeGreaterThan(0);
    expect(JSON.stringify(rows, (_k, v) => (typeof v === "bigint" ? String(v) : v))).not.toMatch(
      /secret (question|answer)/,
    );
  });

  // Every statement outside a transaction is one pool.query (Prisma's adapter runs on the same
  // pool), which checks a client out with pool.connect for itself; a transaction would check one
  // out beyond that.
  async function countStatements(body: () => Promise<unknown>): Promise<{ queries: number; connects: number }> {
    const pool = pgPoolOf(db);
    const query = vi.spyOn(pool, "query");
    const connect = vi.spyOn(pool, "connect");
    try {
      await body();
      return { queries: query.mock.calls.length, connects: connect.mock.calls.length };
    } finally {
      query.mockRestore();
      connect.mockRestore();
    }
  }

  it("a successful call is two statements on either channel: admission, then settlement", async () => {
    const transport = createCountingTransport(() => "fine");
    const http = await setup();
    const overHttp = await countStatements(async () => {
      const result = await relayCall({
        db,
        ...http,
        operation: "complete",
        request: SIMPLE_REQUEST,
        channel: "http",
        transport,
      });
      expect(result.status).toBe(200);
    });
    expect(overHttp).toEqual({ queries: 2, connects: 2 });
    // The settlement relaxes synchronous_commit for its own transaction only: every pooled
    // connection still waits for its flush afterwards.
    const settings = await Promise.all(
      Array.from({ length: 10 }, () => pgPoolOf(db).query<{ synchronous_commit: string }>("SHOW synchronous_commit")),
    );
    expect(new Set(settings.map((r) => r.rows[0]!.synchronous_commit))).toEqual(new Set(["on"]));

    const { taskId } = await createRelayTestTask(db, undefined, "mailbox");
    const { handle, capabilityId } = await issueCapability({ db }, { taskId, ...LIMITS });
    const overMailbox = await countStatements(async () => {
      const result = await relayCall({
        db,
        handle,
        taskId,
        operation: "complete",
        request: SIMPLE_REQUEST,
        channel: "mailbox",
        sequence: 1,
        transport,
      });
      expect(result.status).toBe(200);
    });
    expect(overMailbox).toEqual({ queries: 2, connects: 2 });
    const rows = await db.relayCall.findMany({ where: { capabilityId } });
    expect(rows).toMatchObject([{ channel: "mailbox", sequence: 1, outcome: "ok:scripted" }]);
    expect(rows[0]!.responseBytes).toBeGreaterThan(0);

    const again = await relayCall({
      db,
      handle,
      taskId,
      operation: "complete",
      request: SIMPLE_REQUEST,
      channel: "mailbox",
      sequence: 1,
      transport,
    });
    expect(again).toMatchObject({ code: "RELAY_DUPLICATE_REQUEST" });
    expect(transport.inputs).toHaveLength(2);
  });

  it("500 concurrent calls against a budget of 50 requests admit exactly 50", async () => {
    const { taskId, handle, capabilityId } = await setup({ maxRequests: 50, maxBytes: 10_000_000 });
    const transport = createCountingTransport(async () => {
      await new Promise((r) => setTimeout(r, 5));
      return "fine";
    });
    const results = await Promise.all(
      Array.from({ length: 500 }, () =>
        relayCall({ db, handle, taskId, operation: "complete", request: SIMPLE_REQUEST, channel: "http", transport }),
      ),
    );
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    expect(statuses.filter((s) => s === 429)).toHaveLength(450);
    expect(transport.calls).toBe(50);
    const usage = await readCapabilityUsage({ db }, { capabilityId });
    expect(usage?.usage.requestCount).toBe(50);
    expect(usage?.isRevoked).toBe(true);
    expect(usage?.revokedReason).toBe("exhausted:requests");
    expect(usage?.calls.byOutcome["ok:scripted"]).toBe(50);
    expect(usage?.calls.byOutcome.RELAY_QUOTA_EXHAUSTED).toBe(450);
  });

  it("concurrent calls of several tasks, batched into shared statements, are each judged exactly as if alone", async () => {
    const transport = createCountingTransport(() => "fine");
    const a = await setup({ maxRequests: 5 });
    const b = await setup({ maxRequests: 100 });
    // Three worst-case calls fit whole; a fourth fits with what is left for its response; no fifth.
    const requestBytes = Buffer.byteLength(JSON.stringify(SIMPLE_REQUEST), "utf8");
    const c = await setup({ maxRequests: 100, maxResponseBytes: 1_000, maxBytes: 3 * (requestBytes + 1_000) + 500 });
    const call = (cap: { handle: string }, taskId: string) =>
      relayCall({
        db,
        handle: cap.handle,
        taskId,
        operation: "complete",
        request: SIMPLE_REQUEST,
        channel: "http",
        transport,
      });
    const [ofA, ofB, crossTask, ofC] = await Promise.all([
      Promise.all(Array.from({ length: 20 }, () => call(a, a.taskId))),
      Promise.all(Array.from({ length: 10 }, () => call(b, b.taskId))),
      Promise.all(Array.from({ length: 3 }, () => call(a, b.taskId))),
      Promise.all(Array.from({ length: 8 }, () => call(c, c.taskId))),
    ]);
    const count = (results: { status: number }[], status: number) => results.filter((r) => r.status === status).length;
    expect([count(ofA, 200), count(ofA, 429)]).toEqual([5, 15]);
    expect(count(ofB, 200)).toBe(10);
    expect(crossTask.map((r) => r.code)).toEqual(["RELAY_REFUSED", "RELAY_REFUSED", "RELAY_REFUSED"]);
    expect([count(ofC, 200), count(ofC, 429)]).toEqual([4, 4]);
    expect(transport.calls).toBe(5 + 10 + 4);
    for (const cap of [a, b, c]) {
      const row = await db.relayCapability.findUniqueOrThrow({ where: { id: cap.capabilityId } });
      const calls = await db.relayCall.findMany({ where: { capabilityId: cap.capabilityId } });
      // Every reservation was released: the rows sum to what the budget holds, and it was never passed.
      expect(calls.reduce((sum, r) => sum + r.requestBytes + r.responseBytes, 0)).toBe(Number(row.bytesUsed));
      expect(Number(row.bytesUsed)).toBeLessThanOrEqual(Number(row.maxBytes));
      expect(row.requestCount).toBe(calls.filter((r) => r.outcome.startsWith("ok:")).length);
    }
  });

  it("never lets request + response bytes exceed the byte budget under concurrency", async () => {
    const maxBytes = 5_000;
    const { taskId, handle, capabilityId } = await setup({ maxRequests: 1000, maxBytes });
    const transport = createCountingTransport(async () => {
      await new Promise((r) => setTimeout(r, Math.random() * 10));
      return "x".repeat(300);
    });
    // 40 requests (~48 bytes each) are all admitted at once; their ~316-byte responses then race
    // for the ~3 KB left, so some must be delivered and some refused whole.
    const results = await Promise.all(
      Array.from({ length: 40 }, () =>
        relayCall({ db, handle, taskId, operation: "complete", request: SIMPLE_REQUEST, channel: "http", transport }),
      ),
    );
    const delivered = results.filter((r) => r.status === 200);
    expect(delivered.length).toBeGreaterThan(0);
    expect(results.some((r) => r.status === 429)).toBe(true);
    expect(results.every((r) => r.status === 200 || r.status === 429)).toBe(true);
    const cap = await db.relayCapability.findUniqueOrThrow({ where: { id: capabilityId } });
    expect(Number(cap.bytesUsed)).toBeLessThanOrEqual(maxBytes);
    const calls = await db.relayCall.findMany({ where: { capabilityId } });
    const charged = calls.reduce((sum, c) => sum + c.requestBytes + c.responseBytes, 0);
    // Refused responses leave their request bytes charged (they were reserved at admission) but add nothing.
    expect(charged).toBe(Number(cap.bytesUsed));
    for (const r of delivered) if (r.code === null) expect(r.body.usage.bytesUsed).toBeLessThanOrEqual(maxBytes);
    expect(cap.revokedReason).toMatch(/^exhausted:/);
  });

  it("refuses a response over the per-response cap whole, never truncated", async () => {
    const { taskId, handle } = await setup({ maxResponseBytes: 1_000 });
    const transport = createCountingTransport(() => "y".repeat(5_000));
    const result = await relayCall({
      db,
      handle,
      taskId,
      operation: "complete",
      request: SIMPLE_REQUEST,
      channel: "http",
      transport,
    });
    expect(result.status).toBe(413);
    expect(result.body).toMatchObject({ error: { code: "RELAY_TOO_LARGE" } });
    expect(JSON.stringify(result.body)).not.toContain("yyyy");
  });

  it("refuses a response that does not fit the remaining byte budget and revokes as exhausted", async () => {
    const { taskId, handle, capabilityId } = await setup({ maxBytes: 600 });
    const transport = createCountingTransport(() => "z".repeat(550));
    const result = await relayCall({
      db,
      handle,
      taskId,
      operation: "complete",
      request: SIMPLE_REQUEST,
      channel: "http",
      transport,
    });
    expect(result.status).toBe(429);
    expect(JSON.stringify(result.body)).not.toContain("zzzz");
    const usage = await readCapabilityUsage({ db }, { capabilityId });
    expect(usage?.revokedReason).toBe("exhausted:bytes");
    expect(usage?.usage.bytesUsed).toBeLessThanOrEqual(600);
  });

  it("refuses a request over the per-request cap before the transport", async () => {
    const { taskId, handle } = await setup({ maxRequestBytes: 100 });
    const transport = createCountingTransport();
    const result = await relayCall({
      db,
      handle,
      taskId,
      operation: "complete",
      request: { messages: [{ role: "user", content: "q".repeat(500) }] },
      channel: "http",
      transport,
    });
    expect(result.status).toBe(413);
    expect(result.body).toMatchObject({ error: { code: "RELAY_TOO_LARGE" } });
    expect(transport.calls).toBe(0);
  });

  it("refuses a handle for task A used for task B, and does not charge A", async () => {
    const a = await setup();
    const b = await createRelayTestTask(db);
    const transport = createCountingTransport();
    const result = await relayCall({
      db,
      handle: a.handle,
      taskId: b.taskId,
      operation: "complete",
      request: SIMPLE_REQUEST,
      channel: "http",
      transport,
    });
    expect(result.status).toBe(403);
    expect(result.body).toMatchObject({
      error: { code: "RELAY_REFUSED", message: expect.stringMatching(/another task/) },
    });
    expect(transport.calls).toBe(0);
    expect((await readCapabilityUsage({ db }, { capabilityId: a.capabilityId }))?.usage.requestCount).toBe(0);
  });

  it("refuses a revoked handle, and revocation is idempotent and keeps the first reason", async () => {
    const { taskId, handle, capabilityId } = await setup();
    const transport = createCountingTransport();
    expect(
      (
        await relayCall({
          db,
          handle,
          taskId,
          operation: "complete",
          request: SIMPLE_REQUEST,
          channel: "http",
          transport,
        })
      ).status,
    ).toBe(200);
    expect(await revokeCapability({ db }, { taskId, reason: "task reached review_pending" })).toEqual({
      revokedCapabilityIds: [capabilityId],
    });
    expect(await revokeCapability({ db }, { taskId, reason: "again" })).toEqual({ revokedCapabilityIds: [] });
    expect(await revokeCapability({ db }, { capabilityId, reason: "and again" })).toEqual({ revokedCapabilityIds: [] });
    const result = await relayCall({
      db,
      handle,
      taskId,
      operation: "complete",
      request: SIMPLE_REQUEST,
      channel: "http",
      transport,
    });
    expect(result.status).toBe(403);
    expect(result.body).toMatchObject({
      error: { code: "RELAY_REFUSED", message: expect.stringMatching(/revoked \(task reached review_pending\)/) },
    });
    expect(transport.calls).toBe(1);
    const usage = await readCapabilityUsage({ db }, { taskId });
    expect(usage).toMatchObject({ isRevoked: true, revokedReason: "task reached review_pending" });
    expect(await db.auditLog.count({ where: { action: "relay.revoke", targetId: taskId } })).toBe(1);
  });

  it("refuses an expired handle and revokes it as expired", async () => {
    const { taskId, handle, capabilityId } = await setup();
    await db.relayCapability.update({ where: { id: capabilityId }, data: { deadlineAt: new Date(Date.now() - 1000) } });
    const transport = createCountingTransport();
    const result = await relayCall({
      db,
      handle,
      taskId,
      operation: "complete",
      request: SIMPLE_REQUEST,
      channel: "http",
      transport,
    });
    expect(result.status).toBe(403);
    expect(result.body).toMatchObject({ error: { code: "RELAY_REFUSED", message: expect.stringMatching(/expired/) } });
    expect(transport.calls).toBe(0);
    expect((await readCapabilityUsage({ db }, { capabilityId }))?.revokedReason).toBe("expired");
  });

  it("refuses an unknown or not-allowed operation before the transport is touched", async () => {
    const { taskId, handle, capabilityId } = await setup();
    const transport = createCountingTransport();
    for (const operation of ["embed", "proxy", "../admin", "complete?url=http://169.254.169.254/"]) {
      const result = await relayCall({
        db,
        handle,
        taskId,
        operation,
        request: SIMPLE_REQUEST,
        channel: "http",
        transport,
      });
      expect(result.status).toBe(403);
      expect(result.body).toMatchObject({ error: { code: "RELAY_OPERATION_NOT_ALLOWED" } });
    }
    expect(transport.calls).toBe(0);
    const usage = await readCapabilityUsage({ db }, { capabilityId });
    expect(usage?.usage.requestCount).toBe(0);
    expect(usage?.calls.byOutcome.RELAY_OPERATION_NOT_ALLOWED).toBe(4);
    const operations = await db.relayCall.findMany({ where: { capabilityId }, select: { operation: true } });
    expect(new Set(operations.map((o) => o.operation))).toEqual(new Set(["unknown"]));
  });

  it("refuses malformed requests (and any url/endpoint/method/header/model field) with 400 before admission", async () => {
    const { taskId, handle, capabilityId } = await setup();
    const transport = createCountingTransport();
    const requests: unknown[] = [
      null,
      {},
      { messages: [] },
      { messages: [{ role: "tool", content: "x" }] },
      { messages: [{ role: "user", content: 5 }] },
      { ...SIMPLE_REQUEST, url: "http://127.0.0.1:5432/" },
      { ...SIMPLE_REQUEST, endpoint: "http://internal/" },
      { ...SIMPLE_REQUEST, method: "DELETE" },
      { ...SIMPLE_REQUEST, headers: { authorization: "x" } },
      { ...SIMPLE_REQUEST, model: "gpt-expensive" },
      { messages: [{ role: "user", content: "x", url: "http://x/" }] },
      { ...SIMPLE_REQUEST, maxTokens: 10_000_000 },
    ];
    for (const request of requests) {
      const result = await relayCall({
        db,
        handle,
        taskId,
        operation: "complete",
        request,
        channel: "http",
        transport,
      });
      expect(result.status).toBe(400);
      expect(result.body).toMatchObject({ error: { code: "RELAY_REQUEST_MALFORMED" } });
    }
    for (const badTaskId of ["not-a-uuid", 42, undefined]) {
      const result = await relayCall({
        db,
        handle,
        taskId: badTaskId,
        operation: "complete",
        request: SIMPLE_REQUEST,
        channel: "http",
        transport,
      });
      expect(result.status).toBe(400);
    }
    expect(transport.calls).toBe(0);
    expect((await readCapabilityUsage({ db }, { capabilityId }))?.usage.requestCount).toBe(0);
  });

  it("refuses an unknown or malformed handle without echoing it", async () => {
    const { taskId } = await setup();
    const transport = createCountingTransport();
    for (const handle of ["scr_" + "A".repeat(43), "scr_short", "sk-live-something", undefined, 7]) {
      const result = await relayCall({
        db,
        handle,
        taskId,
        operation: "complete",
        request: SIMPLE_REQUEST,
        channel: "http",
        transport,
      });
      expect(result.status).toBe(403);
      expect(result.body).toMatchObject({ error: { code: "RELAY_REFUSED" } });
      if (typeof handle === "string") expect(JSON.stringify(result.body)).not.toContain(handle);
    }
    expect(transport.calls).toBe(0);
  });

  it("a transport failure is RELAY_UPSTREAM_FAILED with no fallback, and revokes the capability", async () => {
    const { taskId, handle, capabilityId } = await setup();
    const failing = createCountingTransport(() => {
      throw new Error("socket hang up while talking to http://10.0.0.5:8080 with key sk-abcdefgh12345678");
    });
    const result = await relayCall({
      db,
      handle,
      taskId,
      operation: "complete",
      request: SIMPLE_REQUEST,
      channel: "http",
      transport: failing,
    });
    expect(result.status).toBe(502);
    expect(result.body).toMatchObject({
      error: { code: "RELAY_UPSTREAM_FAILED", message: expect.stringMatching(/no fallback/) },
    });
    expect(JSON.stringify(result.body)).not.toMatch(/10\.0\.0\.5|sk-abc/);
    expect(failing.calls).toBe(1);
    const again = await relayCall({
      db,
      handle,
      taskId,
      operation: "complete",
      request: SIMPLE_REQUEST,
      channel: "http",
      transport: failing,
    });
    expect(again.status).toBe(403);
    expect(failing.calls).toBe(1);
    const usage = await readCapabilityUsage({ db }, { capabilityId });
    expect(usage).toMatchObject({ isRevoked: true, revokedReason: "upstream_failed" });
    expect(usage?.calls.byOutcome.RELAY_UPSTREAM_FAILED).toBe(1);
  });

  it("with no upstream configured, fails closed as RELAY_UPSTREAM_FAILED (no default upstream)", async () => {
    const { taskId, handle } = await setup();
    const result = await relayCall({
      db,
      handle,
      taskId,
      operation: "complete",
      request: SIMPLE_REQUEST,
      channel: "http",
    });
    expect(result.status).toBe(502);
    expect(result.body).toMatchObject({
      error: { code: "RELAY_UPSTREAM_FAILED", message: expect.stringMatching(/not_configured/) },
    });
  });

  it("withholds the response of a call in flight when the capability is revoked meanwhile", async () => {
    const { taskId, handle, capabilityId } = await setup();
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const transport = createCountingTransport(async () => {
      await gate;
      return "late answer";
    });
    const pending = relayCall({
      db,
      handle,
      taskId,
      operation: "complete",
      request: SIMPLE_REQUEST,
      channel: "http",
      transport,
    });
    while (transport.calls === 0) await new Promise((r) => setTimeout(r, 5));
    await revokeCapability({ db }, { capabilityId, reason: "task blocked" });
    release();
    const result = await pending;
    expect(result.status).toBe(403);
    expect(JSON.stringify(result.body)).not.toContain("late answer");
  });

  it("a terminal revocation after an exhausted:* one is recorded and withholds the answer of a call still in flight", async () => {
    const { taskId, handle, capabilityId } = await setup({ maxRequests: 1 });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const transport = createCountingTransport(async () => {
      await gate;
      return "late answer";
    });
    const pending = relayCall({
      db,
      handle,
      taskId,
      operation: "complete",
      request: SIMPLE_REQUEST,
      channel: "http",
      transport,
    });
    while (transport.calls === 0) await new Promise((r) => setTimeout(r, 5));
    // The second call finds the request budget spent: the capability is revoked as exhausted.
    expect(
      (
        await relayCall({
          db,
          handle,
          taskId,
          operation: "complete",
          request: SIMPLE_REQUEST,
          channel: "http",
          transport,
        })
      ).status,
    ).toBe(429);
    expect((await readCapabilityUsage({ db }, { taskId }))?.revokedReason).toMatch(/^exhausted:/);

    expect(await revokeCapability({ db }, { taskId, reason: "task ended: cancelled" })).toEqual({
      revokedCapabilityIds: [capabilityId],
    });
    release();
    const result = await pending;
    expect(result.status).toBe(403);
    expect(JSON.stringify(result.body)).not.toContain("late answer");
    const usage = await readCapabilityUsage({ db }, { taskId });
    expect(usage?.revokedReason).toMatch(/^task ended: cancelled \(after exhausted:/);
    expect(await db.auditLog.count({ where: { action: "relay.revoke", targetId: taskId } })).toBe(1);
    // Still idempotent: another terminal revocation changes nothing.
    expect(await revokeCapability({ db }, { taskId, reason: "operator" })).toEqual({ revokedCapabilityIds: [] });
  });

  it("withholds the response of a call whose deadline passed while the upstream answered", async () => {
    const { taskId, handle, capabilityId } = await setup();
    const transport = createCountingTransport(async () => {
      await db.relayCapability.update({
        where: { id: capabilityId },
        data: { deadlineAt: new Date(Date.now() - 1000) },
      });
      return "too late";
    });
    const result = await relayCall({
      db,
      handle,
      taskId,
      operation: "complete",
      request: SIMPLE_REQUEST,
      channel: "http",
      transport,
    });
    expect(result.status).toBe(403);
    expect(result.body).toMatchObject({
      error: { code: "RELAY_REFUSED", message: expect.stringMatching(/expired while the call was in flight/) },
    });
    expect(JSON.stringify(result.body)).not.toContain("too late");
    expect((await readCapabilityUsage({ db }, { capabilityId }))?.revokedReason).toBe("expired");
  });

  it("the usage snapshot holds counters, limits and revocation, never payload bytes", async () => {
    const { taskId, handle, capabilityId } = await setup();
    const transport = createCountingTransport(() => "PAYLOAD-RESPONSE-MARKER");
    await relayCall({
      db,
      handle,
      taskId,
      operation: "complete",
      request: { messages: [{ role: "user", content: "PAYLOAD-REQUEST-MARKER" }] },
      channel: "http",
      transport,
    });
    await revokeCapability({ db }, { capabilityId, reason: "done" });
    const usage = await readCapabilityUsage({ db }, { capabilityId });
    expect(usage).toMatchObject({
      capabilityId,
      taskId,
      allowedOps: ["complete"],
      usage: { requestCount: 1 },
      limits: { maxRequests: 10 },
      isRevoked: true,
      revokedReason: "done",
      calls: { total: 1, upstreams: ["scripted"] },
    });
    const text = JSON.stringify(usage);
    expect(text).not.toMatch(/PAYLOAD-(REQUEST|RESPONSE)-MARKER/);
    expect(text).not.toContain(handle);
    expect(text).not.toContain(hashHandle(handle));
    expect(Object.keys(usage!).sort()).toEqual([
      "allowedOps",
      "calls",
      "capabilityId",
      "createdAt",
      "isExpired",
      "isRevoked",
      "limits",
      "modelCostMicros",
      "modelReservedMicros",
      "prices",
      "revokedAt",
      "revokedReason",
      "task",
      "taskId",
      "tokens",
      "usage",
    ]);
  });

  it("validates issue limits against the ceilings and refuses an unknown task", async () => {
    const { taskId } = await createRelayTestTask(db);
    await expect(
      issueCapability({ db }, { taskId, ...LIMITS, allowedOps: ["complete", "shell" as "complete"] }),
    ).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });
    await expect(
      issueCapability({ db }, { taskId, ...LIMITS, maxRequestBytes: 64 * 1024 * 1024 }),
    ).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });
    await expect(issueCapability({ db }, { taskId, ...LIMITS, maxRequests: 0 })).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });
    await expect(
      issueCapability({ db }, { taskId: "00000000-0000-4000-8000-000000000000", ...LIMITS }),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});
