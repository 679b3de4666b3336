import { describe, expect, it } from "vitest";
import { POST } from "../../app/api/relay/v1/[operation]/route";
import { createTestDatabase } from "../testing/test-database";
import { issueCapability } from "./issue-capability";
import { RELAY_MAX_HTTP_BODY_BYTES } from "./limits";
import { readCapabilityUsage } from "./read-capability-usage";
import { createRelayTestTask, SIMPLE_REQUEST } from "./testing/relay-fixtures";

describe("POST /api/relay/v1/[operation]", async () => {
  const { db } = await createTestDatabase();
  const { taskId } = await createRelayTestTask(db);
  const { handle, capabilityId } = await issueCapability({ db }, { taskId, maxRequests: 10, maxBytes: 100_000, maxRequestBytes: 10_000, maxResponseBytes: 10_000, ttlSeconds: 600 });

  function call(operation: string, init: { authorization?: string; body?: BodyInit }) {
    const headers: Record<string, string> = { "content-type": "application/json" };
    if (init.authorization !== undefined) headers.authorization = init.authorization;
    return POST(new Request(`http://relay.local/api/relay/v1/${operation}`, { method: "POST", headers, body: init.body }), { params: Promise.resolve({ operation }) });
  }

  it.each([
    ["no Authorization", undefined],
    ["a non-bearer scheme", `Basic ${handle}`],
    ["an unknown handle", `Bearer scr_${"B".repeat(43)}`],
  ])("refuses %s with 403 and never echoes the header", async (_label, authorization) => {
    const response = await call("complete", { authorization, body: JSON.stringify({ taskId, request: SIMPLE_REQUEST }) });
    expect(response.status).toBe(403);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ error: { code: "RELAY_REFUSED" } });
    expect(text).not.toContain(handle);
    expect(text).not.toContain("B".repeat(43));
    expect(response.headers.get("cache-control")).toBe("no-store");
  });

  it("refuses a malformed body (400) and an oversized one (413), recorded against the capability", async () => {
    const bad = await call("complete", { authorization: `Bearer ${handle}`, body: "{not json" });
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({ error: { code: "RELAY_REQUEST_MALFORMED" } });
    const extra = await call("complete", { authorization: `Bearer ${handle}`, body: JSON.stringify({ taskId, request: SIMPLE_REQUEST, upstream: "http://10.0.0.1/" }) });
    expect(extra.status).toBe(400);
    const huge = await call("complete", { authorization: `Bearer ${handle}`, body: "x".repeat(RELAY_MAX_HTTP_BODY_BYTES + 1) });
    expect(huge.status).toBe(413);
    const usage = await readCapabilityUsage({ db }, { capabilityId });
    expect(usage?.calls.byOutcome).toMatchObject({ RELAY_REQUEST_MALFORMED: 2, RELAY_TOO_LARGE: 1 });
    expect(usage?.usage.requestCount).toBe(0);
  });

  it("refuses a body shorter than its Content-Length (as Next's proxy leaves an over-limit body)", async () => {
    const body = JSON.stringify({ taskId, request: SIMPLE_REQUEST });
    const request = new Request("http://relay.local/api/relay/v1/complete", { method: "POST", headers: { authorization: `Bearer ${handle}`, "content-length": String(body.length + 100) }, body });
    const response = await POST(request, { params: Promise.resolve({ operation: "complete" }) });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: "RELAY_REQUEST_MALFORMED", message: expect.stringMatching(/Content-Length/) } });
  });

  /** A 16 MiB body that counts how much of it the server pulled. */
  function countingBody(totalBytes: number) {
    const chunk = new Uint8Array(64 * 1024).fill(0x78);
    let pulled = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (pulled >= totalBytes) return controller.close();
        pulled += chunk.byteLength;
        controller.enqueue(chunk);
      },
    });
    return { stream, pulled: () => pulled };
  }
  const streamed = (authorization: string, body: ReadableStream<Uint8Array>, contentLength?: number) => {
    const headers: Record<string, string> = { "content-type": "application/json", authorization };
    if (contentLength !== undefined) headers["content-length"] = String(contentLength);
    const request = new Request("http://relay.local/api/relay/v1/complete", { method: "POST", headers, body, duplex: "half" } as RequestInit);
    return POST(request, { params: Promise.resolve({ operation: "complete" }) });
  };

  it("checks the handle before reading the body: an unknown handle's 16 MiB body is not read", async () => {
    const body = countingBody(16 * 1024 * 1024);
    const response = await streamed(`Bearer scr_${"C".repeat(43)}`, body.stream);
    expect(response.status).toBe(403);
    expect(body.pulled()).toBeLessThanOrEqual(128 * 1024);
  });

  it("caps the body at the capability's request limit plus the envelope: a Content-Length over it is refused unread, a longer stream is cut off", async () => {
    const declared = countingBody(16 * 1024 * 1024);
    const early = await streamed(`Bearer ${handle}`, declared.stream, 16 * 1024 * 1024);
    expect(early.status).toBe(413);
    expect(declared.pulled()).toBeLessThanOrEqual(128 * 1024);
    const undeclared = countingBody(16 * 1024 * 1024);
    const late = await streamed(`Bearer ${handle}`, undeclared.stream);
    expect(late.status).toBe(413);
    expect(undeclared.pulled()).toBeLessThanOrEqual(10_000 + 64 * 1024 * 3);
  });

  it("refuses an unknown operation in the path with 403", async () => {
    const response = await call("admin", { authorization: `Bearer ${handle}`, body: JSON.stringify({ taskId, request: SIMPLE_REQUEST }) });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: { code: "RELAY_OPERATION_NOT_ALLOWED" } });
  });
});
