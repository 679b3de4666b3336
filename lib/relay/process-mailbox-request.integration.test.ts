import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../testing/test-database";
import { issueCapability } from "./issue-capability";
import {
  MAILBOX_MAX_REQUEST_FILE_BYTES,
  MAILBOX_MAX_SEQUENCE,
  mailboxInboxPath,
  mailboxOutboxPath,
  ZMailboxResponseFileSchema,
} from "./mailbox-protocol";
import { processMailboxRequest, resumeMailboxSequence } from "./process-mailbox-request";
import { readCapabilityUsage } from "./read-capability-usage";
import { createCountingTransport, createRelayTestTask, SIMPLE_REQUEST } from "./testing/relay-fixtures";

describe("processMailboxRequest", async () => {
  const { db } = await createTestDatabase();

  async function setup() {
    const { taskId } = await createRelayTestTask(db);
    const issued = await issueCapability(
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
    const file = (overrides: Record<string, unknown> = {}) =>
      Buffer.from(
        JSON.stringify({
          v: 1,
          handle: issued.handle,
          taskId,
          operation: "complete",
          request: SIMPLE_REQUEST,
          ...overrides,
        }),
      );
    return { taskId, ...issued, file };
  }

  function parse(bytes: Buffer) {
    return ZMailboxResponseFileSchema.parse(JSON.parse(bytes.toString("utf8")));
  }

  it("names files with six-digit sequence numbers under /tmp/relay", () => {
    expect(mailboxOutboxPath(1)).toBe("/tmp/relay/outbox/000001.json");
    expect(mailboxInboxPath(42)).toBe("/tmp/relay/inbox/000042.json");
    expect(() => mailboxOutboxPath(0)).toThrow(RangeError);
    expect(() => mailboxOutboxPath(MAILBOX_MAX_SEQUENCE + 1)).toThrow(RangeError);
  });

  it("answers a request file with a v1 response file carrying the same body as HTTP", async () => {
    const { taskId, file } = await setup();
    const transport = createCountingTransport(() => "mailbox answer");
    const answer = await processMailboxRequest({ db, taskId, sequence: 1, bytes: file(), transport });
    expect(answer).toMatchObject({ status: 200, code: null });
    expect(parse(answer.responseBytes)).toMatchObject({
      v: 1,
      status: 200,
      body: { completion: { content: "mailbox answer" }, usage: { requestCount: 1 } },
    });
    expect(await resumeMailboxSequence({ db, taskId })).toBe(2);
  });

  it("resumes at a request a killed worker claimed but never answered: answered duplicate once, then numbering goes on", async () => {
    const { taskId, capabilityId, file } = await setup();
    const transport = createCountingTransport(() => "fine");
    expect((await processMailboxRequest({ db, taskId, sequence: 1, bytes: file(), transport })).status).toBe(200);
    // A worker claimed request 2 and was killed before it settled or answered.
    await db.relayCall.create({
      data: {
        capabilityId,
        channel: "mailbox",
        sequence: 2,
        operation: "complete",
        outcome: "pending",
        requestBytes: 0,
        responseBytes: 0,
        durationMs: 0,
      },
    });
    expect(await resumeMailboxSequence({ db, taskId })).toBe(2);
    const again = await processMailboxRequest({ db, taskId, sequence: 2, bytes: file(), transport });
    expect(again).toMatchObject({ code: "RELAY_DUPLICATE_REQUEST" });
    expect(transport.calls).toBe(1);
    // The guest's client re-sends it as request 3, a new call.
    expect((await processMailboxRequest({ db, taskId, sequence: 3, bytes: file(), transport })).status).toBe(200);
    expect(await resumeMailboxSequence({ db, taskId })).toBe(4);
    const rows = await db.relayCall.findMany({ where: { capabilityId }, orderBy: { sequence: "asc" } });
    expect(rows.map((r) => [r.sequence, r.outcome])).toEqual([
      [1, "ok:scripted"],
      [2, "INTERNAL"],
      [3, "ok:scripted"],
    ]);
  });

  it("answers a duplicate sequence once: the upstream is never called twice", async () => {
    const { taskId, capabilityId, file } = await setup();
    const transport = createCountingTransport(() => "only once");
    const first = await processMailboxRequest({ db, taskId, sequence: 1, bytes: file(), transport });
    expect(first.status).toBe(200);
    const again = await processMailboxRequest({ db, taskId, sequence: 1, bytes: file(), transport });
    expect(again).toMatchObject({ status: 409, code: "RELAY_DUPLICATE_REQUEST" });
    expect(again.responseBytes.toString()).not.toContain("only once");
    // Concurrent re-polls of one new sequence: exactly one reaches the upstream.
    const racing = await Promise.all(
      Array.from({ length: 20 }, () => processMailboxRequest({ db, taskId, sequence: 2, bytes: file(), transport })),
    );
    expect(racing.filter((r) => r.status === 200)).toHaveLength(1);
    expect(racing.filter((r) => r.code === "RELAY_DUPLICATE_REQUEST")).toHaveLength(19);
    expect(transport.calls).toBe(2);
    const usage = await readCapabilityUsage({ db }, { capabilityId });
    expect(usage?.usage.requestCount).toBe(2);
    expect(await db.relayCall.count({ where: { capabilityId, channel: "mailbox" } })).toBe(2);
  });

  it("repeats the same refusal for a re-polled refused sequence, without calling upstream", async () => {
    const { taskId, file } = await setup();
    const transport = createCountingTransport();
    const first = await processMailboxRequest({
      db,
      taskId,
      sequence: 1,
      bytes: file({ operation: "shell" }),
      transport,
    });
    expect(first).toMatchObject({ status: 403, code: "RELAY_OPERATION_NOT_ALLOWED" });
    const again = await processMailboxRequest({
      db,
      taskId,
      sequence: 1,
      bytes: file({ operation: "shell" }),
      transport,
    });
    expect(again).toMatchObject({ status: 403, code: "RELAY_OPERATION_NOT_ALLOWED" });
    expect(transport.calls).toBe(0);
  });

  it.each([
    ["not JSON", Buffer.from('{"v":1,')],
    ["not UTF-8", Buffer.from([0xff, 0xfe, 0x7b, 0x7d])],
    ["wrong version", null],
    ["unknown key", null],
    ["malformed request", null],
  ])(
    "refuses a malformed request file (%s) with a 400 response file, recorded once per sequence",
    async (label, raw) => {
      const { taskId, capabilityId, file } = await setup();
      const transport = createCountingTransport();
      const bytes =
        raw ??
        (label === "wrong version"
          ? file({ v: 2 })
          : label === "unknown key"
            ? file({ url: "http://169.254.169.254/" })
            : file({ request: { messages: [{ role: "user", content: "x" }], endpoint: "http://x" } }));
      const answer = await processMailboxRequest({ db, taskId, sequence: 1, bytes, transport });
      expect(answer).toMatchObject({ status: 400, code: "RELAY_REQUEST_MALFORMED" });
      expect(parse(answer.responseBytes).body).toMatchObject({ error: { code: "RELAY_REQUEST_MALFORMED" } });
      const again = await processMailboxRequest({ db, taskId, sequence: 1, bytes, transport });
      expect(again.code).toBe("RELAY_REQUEST_MALFORMED");
      expect(transport.calls).toBe(0);
      expect(await db.relayCall.count({ where: { capabilityId, channel: "mailbox", sequence: 1 } })).toBe(1);
      expect((await readCapabilityUsage({ db }, { capabilityId }))?.usage.requestCount).toBe(0);
    },
  );

  it("refuses an oversized request file without parsing it", async () => {
    const { taskId } = await setup();
    const transport = createCountingTransport();
    const answer = await processMailboxRequest({
      db,
      taskId,
      sequence: 1,
      bytes: Buffer.alloc(MAILBOX_MAX_REQUEST_FILE_BYTES + 1, 0x20),
      transport,
    });
    expect(answer).toMatchObject({ status: 413, code: "RELAY_TOO_LARGE" });
    expect(transport.calls).toBe(0);
  });

  it("refuses a file naming another task even with that task's valid handle, and does not charge it", async () => {
    const a = await setup();
    const b = await setup();
    const transport = createCountingTransport();
    // Guest B's mailbox carries task A's handle and task A's id.
    const answer = await processMailboxRequest({ db, taskId: b.taskId, sequence: 1, bytes: a.file(), transport });
    expect(answer).toMatchObject({ status: 403, code: "RELAY_REFUSED" });
    // …or task A's handle with its own task id.
    const other = await processMailboxRequest({
      db,
      taskId: b.taskId,
      sequence: 2,
      bytes: a.file({ taskId: b.taskId }),
      transport,
    });
    expect(other).toMatchObject({ status: 403, code: "RELAY_REFUSED" });
    expect(transport.calls).toBe(0);
    expect((await readCapabilityUsage({ db }, { capabilityId: a.capabilityId }))?.usage.requestCount).toBe(0);
    // A's own sequence 1 and 2 are still free.
    const own1 = await processMailboxRequest({ db, taskId: a.taskId, sequence: 1, bytes: a.file(), transport });
    expect(own1, JSON.stringify(own1)).toMatchObject({ status: 200 });
    expect(
      (await processMailboxRequest({ db, taskId: a.taskId, sequence: 2, bytes: a.file(), transport })).status,
    ).toBe(200);
  });

  it("refuses out-of-range sequence numbers", async () => {
    const { taskId, file } = await setup();
    for (const sequence of [0, -1, 1.5, MAILBOX_MAX_SEQUENCE + 1]) {
      expect((await processMailboxRequest({ db, taskId, sequence, bytes: file() })).code).toBe(
        "RELAY_REQUEST_MALFORMED",
      );
    }
  });
});
