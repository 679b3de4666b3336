/**
 * The guest relay client against the real relay: a real database, the real processMailboxRequest
 * driven by a test worker loop that behaves like the worker (probe the next sequence by exact
 * name — no listing — answer, upload), and the relay listener's handler behind a real unix socket.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import * as protocol from "../lib/relay/mailbox-protocol";
import { issueCapability } from "../lib/relay/issue-capability";
import { processMailboxRequest, resumeMailboxSequence } from "../lib/relay/process-mailbox-request";
import { createRelayRequestListener } from "../lib/relay/relay-http";
import { readCapabilityUsage } from "../lib/relay/read-capability-usage";
import { createRelayTestTask } from "../lib/relay/testing/relay-fixtures";
import { setRelayUpstream } from "../lib/relay/upstream-setting";
import { GUEST_MAILBOX_ROOT, GUEST_RELAY_SOCKET } from "../lib/contract/guest-layout";
import { createTestDatabase } from "../lib/testing/test-database";
import * as client from "./relay-client.mjs";
import * as guestProtocol from "./relay-protocol.mjs";
import type { ChatRequest } from "./relay-client.mjs";
import { runStudentAgent } from "./student-agent.mjs";

const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "relay-client-"));
/** The guest's mailbox client as the tests use it: a 10 s budget, polling every 20 ms. */
const mailboxClient = (taskId: string, handle: string, root: string) =>
  client.createRelayClient({
    taskId,
    channel: "mailbox",
    handle,
    mailboxRoot: root,
    timeoutMs: 10_000,
    pollIntervalMs: 20,
  });
const DEMO_SCRIPT = path.resolve(import.meta.dirname, "../lib/demo/scripted-completions.json");

describe("guest relay client", async () => {
  const { db } = await createTestDatabase();
  await setRelayUpstream({
    db,
    value: { kind: "scripted", scriptFile: DEMO_SCRIPT },
    via: "test",
    reason: "test setup",
  });
  const stops: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const stop of stops) await stop();
    await fs.rm(tmp, { recursive: true, force: true });
  });

  async function newTask() {
    const { taskId } = await createRelayTestTask(db);
    const issued = await issueCapability(
      { db },
      {
        taskId,
        maxRequests: 5,
        maxBytes: 1_000_000,
        maxRequestBytes: 200_000,
        maxResponseBytes: 100_000,
        ttlSeconds: 600,
      },
    );
    return { taskId, ...issued };
  }

  /** The worker's side of the mailbox, as the protocol describes it (files API: get by exact path, put). */
  function startMailboxWorker(
    root: string,
    taskId: string,
    options: { corruptFirstUpload?: boolean; startAt?: number } = {},
  ) {
    let isRunning = true;
    let next = options.startAt ?? 1;
    let uploads = 0;
    const loop = (async () => {
      while (isRunning) {
        const outboxFile = path.join(root, "outbox", protocol.mailboxFileName(next));
        let bytes: Buffer | null = null;
        try {
          bytes = await fs.readFile(outboxFile);
        } catch {
          bytes = null; // 404: nothing yet
        }
        if (!bytes) {
          await new Promise((r) => setTimeout(r, 20));
          continue;
        }
        const answer = await processMailboxRequest({ db, taskId, sequence: next, bytes });
        const inboxFile = path.join(root, "inbox", protocol.mailboxFileName(next));
        if (options.corruptFirstUpload && uploads === 0) {
          // An upload observed mid-write: the client must wait for the whole file.
          await fs.writeFile(inboxFile, answer.responseBytes.subarray(0, 10));
          await new Promise((r) => setTimeout(r, 300));
        }
        await fs.writeFile(inboxFile, answer.responseBytes);
        uploads++;
        next++;
      }
    })();
    stops.push(async () => {
      isRunning = false;
      await loop;
    });
    return {
      stop: async () => {
        isRunning = false;
        await loop;
      },
    };
  }

  it("mirrors the protocol constants of lib/relay/mailbox-protocol.ts", () => {
    expect(client.MAILBOX_ROOT).toBe(GUEST_MAILBOX_ROOT);
    expect(guestProtocol.MAILBOX_PROTOCOL_VERSION).toBe(protocol.MAILBOX_PROTOCOL_VERSION);
    expect(guestProtocol.MAILBOX_SEQUENCE_DIGITS).toBe(protocol.MAILBOX_SEQUENCE_DIGITS);
    expect(guestProtocol.MAILBOX_MAX_SEQUENCE).toBe(protocol.MAILBOX_MAX_SEQUENCE);
    expect(guestProtocol.MAILBOX_POLL_INTERVAL_MS).toBe(protocol.MAILBOX_POLL_INTERVAL_MS);
    expect(guestProtocol.MAX_RESPONSE_BYTES).toBe(protocol.MAILBOX_MAX_RESPONSE_FILE_BYTES);
    expect(client.RELAY_SOCKET_PATH).toBe(GUEST_RELAY_SOCKET);
    for (const n of [1, 42, protocol.MAILBOX_MAX_SEQUENCE])
      expect(guestProtocol.mailboxFileName(n)).toBe(protocol.mailboxFileName(n));
  });

  it("mailbox: writes numbered request files atomically and reads the worker's answers", async () => {
    const { taskId, handle, capabilityId } = await newTask();
    const root = path.join(tmp, "mailbox-ok");
    const worker = startMailboxWorker(root, taskId, { corruptFirstUpload: true });
    const relay = mailboxClient(taskId, handle, root);
    const first = await relay.complete([{ role: "user", content: "add() subtracts instead of adding" }], {
      maxTokens: 100,
    });
    expect(first.content).toContain("return a + b;");
    expect(first.usage).toMatchObject({ upstream: "scripted", requestCount: 1 });
    const second = await relay.complete([{ role: "user", content: "unrelated" }]);
    expect(second.content).toMatch(/scripted demo transport/);
    expect((await fs.readdir(path.join(root, "outbox"))).sort()).toEqual(["000001.json", "000002.json"]);
    const written = JSON.parse(await fs.readFile(path.join(root, "outbox", "000001.json"), "utf8"));
    expect(written).toEqual({
      v: 1,
      handle,
      taskId,
      operation: "complete",
      request: { messages: [{ role: "user", content: "add() subtracts instead of adding" }], maxTokens: 100 },
    });
    await worker.stop();
    expect((await readCapabilityUsage({ db }, { capabilityId }))?.usage.requestCount).toBe(2);
  });

  it("mailbox: a request a killed worker claimed but never answered is sent once more under a new number", async () => {
    const { taskId, handle, capabilityId } = await newTask();
    const root = path.join(tmp, "mailbox-abandoned");
    const relay = mailboxClient(taskId, handle, root);
    const answered = relay.complete([{ role: "user", content: "add() subtracts instead of adding" }]);
    // The killed worker had claimed request 1; the next worker resumes there.
    await db.relayCall.create({
      data: {
        capabilityId,
        channel: "mailbox",
        sequence: 1,
        operation: "complete",
        outcome: "pending",
        requestBytes: 0,
        responseBytes: 0,
        durationMs: 0,
      },
    });
    const worker = startMailboxWorker(root, taskId, { startAt: await resumeMailboxSequence({ db, taskId }) });
    const first = await answered;
    expect(first.content).toContain("return a + b;");
    expect((await fs.readdir(path.join(root, "outbox"))).sort()).toEqual(["000001.json", "000002.json"]);
    await worker.stop();
    expect((await readCapabilityUsage({ db }, { capabilityId }))?.usage.requestCount).toBe(1);
  });

  it("mailbox: a restarted client continues numbering after existing requests", async () => {
    const { taskId, handle } = await newTask();
    const root = path.join(tmp, "mailbox-restart");
    const worker = startMailboxWorker(root, taskId);
    await mailboxClient(taskId, handle, root).complete([{ role: "user", content: "one" }]);
    await mailboxClient(taskId, handle, root).complete([{ role: "user", content: "two" }]);
    expect((await fs.readdir(path.join(root, "outbox"))).sort()).toEqual(["000001.json", "000002.json"]);
    await worker.stop();
  });

  it("mailbox: a refusal rejects with the relay's code and never contains the handle", async () => {
    const { taskId, handle } = await newTask();
    const root = path.join(tmp, "mailbox-refused");
    const worker = startMailboxWorker(root, taskId);
    const relay = mailboxClient(taskId, handle, root);
    // @ts-expect-error — a role the relay's `complete` refuses, sent on purpose.
    const error = await relay.complete([{ role: "tool", content: "x" }]).catch((e: unknown) => e);
    expect(error).toMatchObject({ name: "RelayClientError", code: "RELAY_REQUEST_MALFORMED", status: 400 });
    expect(String((error as Error).message)).not.toContain(handle);
    await worker.stop();
  });

  it("mailbox: gives up at its deadline when nobody answers", async () => {
    const { taskId, handle } = await newTask();
    const relay = client.createRelayClient({
      taskId,
      channel: "mailbox",
      handle,
      mailboxRoot: path.join(tmp, "mailbox-silent"),
      timeoutMs: 300,
      pollIntervalMs: 20,
    });
    await expect(relay.complete([{ role: "user", content: "hello?" }])).rejects.toMatchObject({
      code: "RELAY_CLIENT_TIMEOUT",
    });
  });

  describe("http over a unix socket", async () => {
    const socketPath = path.join(tmp, "relay.sock");
    // Stands in for the substrate's forwarder + the relay listener: the listener's real request handler behind a socket.
    const server = http.createServer(createRelayRequestListener({ db }));
    await new Promise<void>((r) => server.listen(socketPath, r));
    stops.push(() => new Promise((r) => server.close(() => r())));

    it("answers a completion through the socket", async () => {
      const { taskId, handle } = await newTask();
      const relay = client.createRelayClient({ taskId, channel: "http", handle, socketPath, timeoutMs: 10_000 });
      const answer = await relay.complete([{ role: "user", content: "Calling add(2, 3) returns -1." }]);
      expect(answer.content).toContain("```file src/add.js");
    });

    it("surfaces refusals (another task's handle) as RelayClientError without the handle", async () => {
      const a = await newTask();
      const b = await newTask();
      const relay = client.createRelayClient({
        taskId: b.taskId,
        channel: "http",
        handle: a.handle,
        socketPath,
        timeoutMs: 10_000,
      });
      const error = await relay.complete([{ role: "user", content: "x" }]).catch((e: unknown) => e);
      expect(error).toMatchObject({ code: "RELAY_REFUSED", status: 403 });
      expect(String((error as Error).message)).not.toContain(a.handle);
    });

    it("fails visibly when the socket is absent", async () => {
      const { taskId, handle } = await newTask();
      const relay = client.createRelayClient({
        taskId,
        channel: "http",
        handle,
        socketPath: path.join(tmp, "absent.sock"),
        timeoutMs: 2_000,
      });
      await expect(relay.complete([{ role: "user", content: "x" }])).rejects.toMatchObject({ code: "RELAY_CLIENT_IO" });
    });
  });

  it("reference agent, end to end on the demo calculator: scripted relay over the mailbox fixes add() and npm test passes", async () => {
    const { taskId, handle, capabilityId } = await newTask();
    const repo = path.join(tmp, "calculator");
    await fs.mkdir(path.join(repo, "src"), { recursive: true });
    await fs.mkdir(path.join(repo, "test"), { recursive: true });
    await fs.writeFile(
      path.join(repo, "package.json"),
      JSON.stringify({ name: "calculator", type: "module", scripts: { test: "node --test" } }, null, 2),
    );
    await fs.writeFile(path.join(repo, "src/add.js"), "export function add(a, b) {\n  return a - b;\n}\n");
    await fs.writeFile(
      path.join(repo, "test/add.test.js"),
      'import test from "node:test";\nimport assert from "node:assert/strict";\nimport { add } from "../src/add.js";\n\ntest("add", () => {\n  assert.equal(add(2, 3), 5);\n});\n',
    );
    execFileSync("git", ["init", "-q", repo]);
    const taskFile = path.join(tmp, "task.json");
    await fs.writeFile(
      taskFile,
      JSON.stringify({
        v: 1,
        taskId,
        repository: "demo/calculator",
        issue: {
          number: 1,
          title: "add() subtracts instead of adding",
          body: "Calling add(2, 3) returns -1. It should return 5.",
          untrusted: true,
        },
        relay: { channel: "mailbox", handle, socketPath: null },
      }),
    );
    const root = path.join(tmp, "mailbox-agent");
    const worker = startMailboxWorker(root, taskId);
    const outputDir = path.join(tmp, "output");
    const relay = mailboxClient(taskId, handle, root);
    const { exitCode, report } = await runStudentAgent({
      taskFile,
      repoDir: repo,
      outputDir,
      client: relay,
      testTimeoutMs: 60_000,
    });
    await worker.stop();
    expect(exitCode).toBe(0);
    expect(await fs.readFile(path.join(repo, "src/add.js"), "utf8")).toBe(
      "export function add(a, b) {\n  return a + b;\n}\n",
    );
    expect(report.editedPaths).toEqual(["src/add.js"]);
    expect(report.supplementalCheck).toMatchObject({ command: "npm test", exitCode: 0 });
    expect(report.summary).toMatch(/scripted demo transport, not a model/);
    const written = JSON.parse(await fs.readFile(path.join(outputDir, "student-report.json"), "utf8"));
    expect(written).toEqual(report);
    expect(JSON.stringify(written)).not.toContain(handle);
    expect(Buffer.byteLength(JSON.stringify(written))).toBeLessThan(20_000);
    expect((await readCapabilityUsage({ db }, { capabilityId }))?.calls.upstreams).toEqual(["scripted"]);
  });

  it("reference agent: a relay failure writes a report with no edits and a non-zero exit", async () => {
    const { taskId, handle } = await newTask();
    const repo = path.join(tmp, "untouched");
    await fs.mkdir(repo);
    await fs.writeFile(path.join(repo, "a.js"), "1\n");
    const taskFile = path.join(tmp, "task-fail.json");
    await fs.writeFile(
      taskFile,
      JSON.stringify({
        taskId,
        repository: "demo/x",
        issue: { number: 2, title: "t", body: "b" },
        relay: { channel: "http", handle, socketPath: path.join(tmp, "no.sock") },
      }),
    );
    const outputDir = path.join(tmp, "output-fail");
    const { exitCode, report } = await runStudentAgent({ taskFile, repoDir: repo, outputDir });
    expect(exitCode).toBe(2);
    expect(report.editedPaths).toEqual([]);
    expect(report.summary).toMatch(/relay failed \(RELAY_CLIENT_IO\)/);
    expect(await fs.readFile(path.join(repo, "a.js"), "utf8")).toBe("1\n");
  });
});

/**
 * chat() on the wire. The relay does not serve `chat` yet (its transports land separately), so the
 * test answers the mailbox itself, byte for byte as the protocol describes: a v1 answer file in the
 * inbox under the request's number.
 */
describe("guest relay client: chat", () => {
  afterAll(() => fs.rm(tmp, { recursive: true, force: true }));
  const CHAT_REQUEST: ChatRequest = {
    messages: [{ role: "user", content: "what is 2 + 2?" }],
    tools: [{ name: "add", parameters: { type: "object", properties: { a: { type: "number" } } } }],
    toolChoice: { type: "auto" },
    maxTokens: 50,
  };

  async function answerFirstRequest(root: string, answer: unknown) {
    const outboxFile = path.join(root, "outbox", protocol.mailboxFileName(1));
    for (;;) {
      const written = await fs.readFile(outboxFile, "utf8").catch(() => null);
      if (written !== null) {
        await fs.mkdir(path.join(root, "inbox"), { recursive: true });
        await fs.writeFile(path.join(root, "inbox", protocol.mailboxFileName(1)), JSON.stringify(answer));
        return JSON.parse(written);
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  it("sends the chat operation and resolves to the chat answer and usage", async () => {
    const root = path.join(tmp, "chat-ok");
    const relay = mailboxClient("00000000-0000-4000-8000-000000000001", "scr_chat_handle_xxxxxxxxxxxxxxxx", root);
    const chat = {
      message: { role: "assistant", content: null, toolCalls: [{ id: "call_1", name: "add", arguments: '{"a":2}' }] },
      finishReason: "tool_calls",
      model: "pinned-model",
    };
    const [answer, written] = await Promise.all([
      relay.chat(CHAT_REQUEST),
      answerFirstRequest(root, { v: 1, status: 200, body: { chat, usage: { inputTokens: 7, outputTokens: 3 } } }),
    ]);
    expect(written).toMatchObject({ v: 1, operation: "chat", request: CHAT_REQUEST });
    expect(answer).toEqual({ chat, usage: { inputTokens: 7, outputTokens: 3 } });
  });

  it("rejects an answer without a chat message as a protocol error, and a refusal with the relay's code", async () => {
    const malformed = mailboxClient(
      "00000000-0000-4000-8000-000000000002",
      "scr_chat_handle_xxxxxxxxxxxxxxxx",
      path.join(tmp, "chat-bad"),
    );
    const [outcome] = await Promise.allSettled([
      malformed.chat(CHAT_REQUEST),
      answerFirstRequest(path.join(tmp, "chat-bad"), { v: 1, status: 200, body: { completion: { content: "text" } } }),
    ]);
    expect(outcome).toMatchObject({ status: "rejected", reason: { code: "RELAY_CLIENT_PROTOCOL" } });

    const refused = mailboxClient(
      "00000000-0000-4000-8000-000000000003",
      "scr_chat_handle_xxxxxxxxxxxxxxxx",
      path.join(tmp, "chat-refused"),
    );
    const [refusal] = await Promise.allSettled([
      refused.chat(CHAT_REQUEST),
      answerFirstRequest(path.join(tmp, "chat-refused"), {
        v: 1,
        status: 429,
        body: { error: { code: "RELAY_TOKENS_EXHAUSTED", message: "the task's token budget is spent" } },
      }),
    ]);
    expect(refusal).toMatchObject({ status: "rejected", reason: { code: "RELAY_TOKENS_EXHAUSTED", status: 429 } });
  });
});
