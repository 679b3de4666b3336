import http from "node:http";
import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../testing/test-database";
import { issueCapability } from "./issue-capability";
import { RELAY_MAX_HTTP_BODY_BYTES } from "./limits";
import { readCapabilityUsage } from "./read-capability-usage";
import { startRelayServer } from "./relay-server";
import { createCountingTransport, createRelayTestTask, SIMPLE_REQUEST } from "./testing/relay-fixtures";

type TPosted = { status: number; text: string; headers: http.IncomingHttpHeaders; writtenAtResponse: number };

/** A raw HTTP request to the listener; a streamed body is written with backpressure, and the bytes written when the answer arrived are counted. */
function send(
  base: string,
  init: {
    method?: string;
    path: string;
    headers?: Record<string, string | number>;
    body?: string;
    streamBytes?: number;
  },
): Promise<TPosted> {
  return new Promise((resolve, reject) => {
    let written = 0;
    let writtenAtResponse = -1;
    let isDone = false;
    const req = http.request(
      `${base}${init.path}`,
      { method: init.method ?? "POST", headers: init.headers, agent: false },
      (res) => {
        writtenAtResponse = written;
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => {
          isDone = true;
          req.destroy();
          resolve({
            status: res.statusCode!,
            text: Buffer.concat(chunks).toString("utf8"),
            headers: res.headers,
            writtenAtResponse,
          });
        });
      },
    );
    req.on("error", (error) => {
      if (!isDone && writtenAtResponse < 0) reject(error);
    });
    if (init.streamBytes === undefined) return void req.end(init.body);
    const chunk = Buffer.alloc(64 * 1024, 0x78);
    const pump = () => {
      while (written < init.streamBytes! && writtenAtResponse < 0) {
        written += chunk.byteLength;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      req.end();
    };
    pump();
  });
}

describe("the relay listener: POST /api/relay/v1/{op} over real HTTP", async () => {
  const { db } = await createTestDatabase();
  const { taskId } = await createRelayTestTask(db);
  const { handle, capabilityId } = await issueCapability(
    { db },
    {
      taskId,
      maxRequests: 10,
      maxBytes: 100_000,
      maxRequestBytes: 10_000,
      maxResponseBytes: 10_000,
      maxTokens: 1_000_000,
      ttlSeconds: 600,
    },
  );
  const transport = createCountingTransport(() => "listener answer");
  const server = await startRelayServer({ db, host: "127.0.0.1", port: 0, transport });
  afterAll(() => server.close());

  const call = (operation: string, init: { authorization?: string; body?: string }) =>
    send(server.url, {
      path: `/api/relay/v1/${operation}`,
      headers: {
        "content-type": "application/json",
        ...(init.authorization !== undefined ? { authorization: init.authorization } : {}),
      },
      body: init.body,
    });

  it("answers a valid call with the completion, JSON and no-store", async () => {
    const response = await call("complete", {
      authorization: `Bearer ${handle}`,
      body: JSON.stringify({ taskId, request: SIMPLE_REQUEST }),
    });
    expect(response.status).toBe(200);
    expect(JSON.parse(response.text)).toMatchObject({
      completion: { content: "listener answer" },
      usage: { requestCount: 1 },
    });
    expect(response.headers["cache-control"]).toBe("no-store");
  });

  it.each([
    ["GET on the relay route", "GET", "/api/relay/v1/complete"],
    ["the web app's pages", "GET", "/"],
    ["the web app's sign-in", "POST", "/api/auth/callback/credentials"],
    ["the health route", "GET", "/api/health"],
    ["a path escape", "POST", "/api/relay/v1/../../api/health"],
    ["a query string", "POST", "/api/relay/v1/complete?url=http://169.254.169.254/"],
    ["a nested path", "POST", "/api/relay/v1/complete/extra"],
  ])("refuses %s without serving anything else", async (_label, method, path) => {
    const response = await send(server.url, { method, path, headers: { authorization: `Bearer ${handle}` } });
    expect(response.status === 404 || response.status === 403).toBe(true);
    expect(JSON.parse(response.text)).toHaveProperty("error.code");
  });

  it.each([
    ["no Authorization", undefined],
    ["a non-bearer scheme", `Basic ${handle}`],
    ["an unknown handle", `Bearer scr_${"B".repeat(43)}`],
  ])("refuses %s with 403 and never echoes the header", async (_label, authorization) => {
    const response = await call("complete", {
      authorization,
      body: JSON.stringify({ taskId, request: SIMPLE_REQUEST }),
    });
    expect(response.status).toBe(403);
    expect(JSON.parse(response.text)).toMatchObject({ error: { code: "RELAY_REFUSED" } });
    expect(response.text).not.toContain(handle);
    expect(response.text).not.toContain("B".repeat(43));
    expect(response.headers["cache-control"]).toBe("no-store");
  });

  it("refuses a malformed body (400) and an oversized one (413), recorded against the capability", async () => {
    const { taskId: otherTask } = await createRelayTestTask(db);
    const other = await issueCapability(
      { db },
      {
        taskId: otherTask,
        maxRequests: 10,
        maxBytes: 100_000,
        maxRequestBytes: 10_000,
        maxResponseBytes: 10_000,
        maxTokens: 1_000_000,
        ttlSeconds: 600,
      },
    );
    const bad = await call("complete", { authorization: `Bearer ${other.handle}`, body: "{not json" });
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.text)).toMatchObject({ error: { code: "RELAY_REQUEST_MALFORMED" } });
    const extra = await call("complete", {
      authorization: `Bearer ${other.handle}`,
      body: JSON.stringify({ taskId: otherTask, request: SIMPLE_REQUEST, upstream: "http://10.0.0.1/" }),
    });
    expect(extra.status).toBe(400);
    const huge = await call("complete", {
      authorization: `Bearer ${other.handle}`,
      body: "x".repeat(RELAY_MAX_HTTP_BODY_BYTES + 1),
    });
    expect(huge.status).toBe(413);
    const usage = await readCapabilityUsage({ db }, { capabilityId: other.capabilityId });
    expect(usage?.calls.byOutcome).toMatchObject({ RELAY_REQUEST_MALFORMED: 2, RELAY_TOO_LARGE: 1 });
    expect(usage?.usage.requestCount).toBe(0);
  });

  it("checks the handle before reading the body: an unknown handle's 16 MiB body is answered before it is sent", async () => {
    const response = await send(server.url, {
      path: "/api/relay/v1/complete",
      headers: { authorization: `Bearer scr_${"C".repeat(43)}` },
      streamBytes: 16 * 1024 * 1024,
    });
    expect(response.status).toBe(403);
    expect(response.writtenAtResponse).toBeLessThan(16 * 1024 * 1024);
  });

  it("caps the body at the capability's request limit plus the envelope: a Content-Length over it is refused unread, a longer stream is cut off", async () => {
    const early = await send(server.url, {
      path: "/api/relay/v1/complete",
      headers: { authorization: `Bearer ${handle}`, "content-length": 16 * 1024 * 1024 },
      streamBytes: 16 * 1024 * 1024,
    });
    expect(early.status).toBe(413);
    expect(early.writtenAtResponse).toBeLessThan(16 * 1024 * 1024);
    const late = await send(server.url, {
      path: "/api/relay/v1/complete",
      headers: { authorization: `Bearer ${handle}`, "transfer-encoding": "chunked" },
      streamBytes: 16 * 1024 * 1024,
    });
    // Without a Content-Length the server reads up to the cap and stops collecting there; what the
    // client still sends is discarded, never buffered (the load test bounds the listener's memory).
    expect(late.status).toBe(413);
    expect((await readCapabilityUsage({ db }, { capabilityId }))?.calls.byOutcome.RELAY_TOO_LARGE).toBe(2);
  });

  it("refuses a body shorter than its Content-Length (the client went away mid-body)", async () => {
    const before = (await readCapabilityUsage({ db }, { capabilityId }))?.calls.byOutcome.RELAY_REQUEST_MALFORMED ?? 0;
    await new Promise<void>((resolve) => {
      const req = http.request(`${server.url}/api/relay/v1/complete`, {
        method: "POST",
        headers: { authorization: `Bearer ${handle}`, "content-length": 1000 },
        agent: false,
      });
      req.on("error", () => resolve());
      req.write('{"taskId":');
      setTimeout(() => {
        req.destroy();
        resolve();
      }, 200);
    });
    await expect
      .poll(
        async () => (await readCapabilityUsage({ db }, { capabilityId }))?.calls.byOutcome.RELAY_REQUEST_MALFORMED ?? 0,
      )
      .toBe(before + 1);
  });

  it("refuses an unknown operation in the path with 403", async () => {
    const response = await call("admin", {
      authorization: `Bearer ${handle}`,
      body: JSON.stringify({ taskId, request: SIMPLE_REQUEST }),
    });
    expect(response.status).toBe(403);
    expect(JSON.parse(response.text)).toMatchObject({ error: { code: "RELAY_OPERATION_NOT_ALLOWED" } });
  });
});
