/**
 * `npm run bench:chat` (issue 25): what a real agent's model call costs through the relay.
 *  - `chat` with tools through the relay listener process (admission with its token reservation,
 *    the OpenAI transport's translation, settlement charging the reported tokens), beside the same
 *    wire request sent straight to the upstream and beside `complete` through the same listener,
 *    at c=1 and c=64 (64 tasks);
 *  - the in-guest model endpoint's added time on each channel: the official `openai` SDK →
 *    guest/model-endpoint.mjs → the guest relay client, beside the relay client's own `chat` on the
 *    same channel (HTTP: a unix socket forwarded to the listener, as the local substrate does;
 *    mailbox: files answered by the real processMailboxRequest, polled every 10 ms on both sides).
 * The upstream is a loopback fake speaking the OpenAI wire format; the database is real PostgreSQL.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { Agent } from "undici";
import type { Db } from "../../lib/db/client";
import { issueCapability } from "../../lib/relay/issue-capability";
import { mailboxFileName } from "../../lib/relay/mailbox-protocol";
import { processMailboxRequest } from "../../lib/relay/process-mailbox-request";
import { startFakeOpenAiServer } from "../../lib/relay/testing/fake-upstream-servers";
import { createRelayTestTask } from "../../lib/relay/testing/relay-fixtures";
import { closeUpstreamAgents } from "../../lib/relay/transports/http-upstream";
import { setRelayUpstream } from "../../lib/relay/upstream-setting";
import { ensureCredentialsDir } from "../../lib/secrets/credential-file";
import { startRelayForwarder } from "../../sidecars/local-substrate/relay-forwarder";
import { withBenchDatabase } from "./bench-database";
import { measure, startListenerProcess, type Stats } from "./bench-harness";
import { printBenchJson, row, type TBenchRow } from "./bench-report";
import { createRelayClient } from "../../guest/relay-client.mjs";
import { startModelEndpoint } from "../../guest/model-endpoint.mjs";

const WARMUP = 300;
const SERIAL_CALLS = 300;
const CONCURRENCY = 64;
const CALLS_PER_WORKER = 20;
const MAILBOX_CALLS = 60;
const REPLY = "Read src/add.js first.";
const TOOLS = [
  { name: "list_files", description: "Lists the repository's files", parameters: { type: "object", properties: {} } },
  {
    name: "read_file",
    description: "Reads one file",
    parameters: { type: "object", properties: { path: { type: "string" } }, required: ["path"] },
  },
  {
    name: "write_file",
    description: "Writes one file",
    parameters: {
      type: "object",
      properties: { path: { type: "string" }, content: { type: "string" } },
      required: ["path", "content"],
    },
  },
  { name: "run_tests", description: "Runs npm test", parameters: { type: "object", properties: {} } },
];
const MESSAGES = [
  { role: "system" as const, content: "You fix bugs with the tools you have." },
  { role: "user" as const, content: "Calling add(2, 3) returns -1. It should return 5. Fix src/add.js." },
];
const CHAT_REQUEST = { messages: MESSAGES, tools: TOOLS, maxTokens: 256 };
const OPENAI_TOOLS = TOOLS.map((tool) => ({ type: "function" as const, function: tool }));

async function main(db: Db, databaseUrl: string) {
  const cleanups: (() => Promise<unknown>)[] = [];
  try {
    const credential = `bench-${randomBytes(16).toString("hex")}`;
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "chat-bench-"));
    cleanups.push(() => fs.rm(dataDir, { recursive: true, force: true }));
    const credentialFile = path.join(ensureCredentialsDir(dataDir), "credential");
    await fs.writeFile(credentialFile, credential, { mode: 0o600 });
    const upstream = await startFakeOpenAiServer({ credential, reply: () => REPLY, recordRequests: false });
    cleanups.push(() => upstream.close());
    await setRelayUpstream({
      db,
      value: { kind: "openai", endpoint: upstream.endpoint, model: "bench-model", credentialFile },
      reason: "chat bench",
      via: "bench",
      dataDir,
    });
    cleanups.push(() => closeUpstreamAgents());
    const newCapability = async (label: string, relayChannel: "http" | "mailbox" = "http") => {
      const { taskId } = await createRelayTestTask(db, label, relayChannel);
      const { handle } = await issueCapability(
        { db },
        {
          taskId,
          allowedOps: ["complete", "chat"],
          maxRequests: 100_000,
          maxBytes: 2 ** 40,
          maxRequestBytes: 64 * 1024,
          maxResponseBytes: 64 * 1024,
          maxTokens: 1_000_000_000_000,
          ttlSeconds: 3600,
        },
      );
      return { taskId, handle };
    };
    const perTask = await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => newCapability(`chat-bench-${i}`)));
    const listener = await startListenerProcess(databaseUrl, dataDir);
    cleanups.push(() => listener.stop());

    // --- direct, chat and complete through the listener ---
    const agent = new Agent({ keepAliveTimeout: 30_000, connections: 128 });
    cleanups.push(() => agent.close());
    const endpointUrl = new URL(upstream.endpoint);
    const direct = async () => {
      const response = await agent.request({
        origin: endpointUrl.origin,
        path: endpointUrl.pathname,
        method: "POST",
        headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
        body: JSON.stringify({
          model: "bench-model",
          messages: MESSAGES,
          tools: OPENAI_TOOLS,
          tool_choice: "auto",
          max_tokens: 256,
        }),
      });
      const body = (await response.body.json()) as { choices?: { message?: { content?: string } }[] };
      if (response.statusCode !== 200 || body.choices?.[0]?.message?.content !== REPLY)
        throw new Error(`direct: ${response.statusCode}`);
    };
    const viaListener = (operation: "chat" | "complete") => async (worker: number) => {
      const { taskId, handle } = perTask[worker % perTask.length]!;
      const request = operation === "chat" ? CHAT_REQUEST : { messages: MESSAGES, maxTokens: 256 };
      const response = await agent.request({
        origin: listener.url,
        path: `/api/relay/v1/${operation}`,
        method: "POST",
        headers: { authorization: `Bearer ${handle}`, "content-type": "application/json" },
        body: JSON.stringify({ taskId, request }),
      });
      const body = (await response.body.json()) as {
        chat?: { message?: { content?: string } };
        completion?: { content?: string };
      };
      const content = operation === "chat" ? body.chat?.message?.content : body.completion?.content;
      if (response.statusCode !== 200 || content !== REPLY)
        throw new Error(`${operation}: ${response.statusCode} ${JSON.stringify(body)}`);
    };
    const chat = viaListener("chat");
    const complete = viaListener("complete");
    for (const warmUp of [direct, chat, complete]) await measure(4, WARMUP / 4, warmUp);
    const listenerRows: { label: string; direct: Stats; chat: Stats; complete: Stats }[] = [];
    for (const [label, concurrency, perWorker] of [
      ["c=1", 1, SERIAL_CALLS],
      [`c=${CONCURRENCY}, ${CONCURRENCY} tasks`, CONCURRENCY, CALLS_PER_WORKER],
    ] as const) {
      // Back to back, so drift hits all three alike.
      listenerRows.push({
        label,
        direct: await measure(concurrency, perWorker, direct),
        chat: await measure(concurrency, perWorker, chat),
        complete: await measure(concurrency, perWorker, complete),
      });
    }

    // --- the in-guest endpoint over each channel ---
    const guestRows: { channel: string; client: Stats; endpoint: Stats; endpointStream: Stats }[] = [];
    const socketPath = path.join(dataDir, "relay.sock");
    const forwarder = await startRelayForwarder({
      socketPath,
      target: { host: "127.0.0.1", port: Number(new URL(listener.url).port) },
      maxConnections: 64,
      ownerUid: process.getuid?.() ?? 0,
    });
    cleanups.push(() => forwarder.close());
    for (const channel of ["http", "mailbox"] as const) {
      const { taskId, handle } = await newCapability(`chat-bench-${channel}`, channel);
      const mailboxRoot = path.join(dataDir, `mailbox-${channel}`);
      let isRunning = channel === "mailbox";
      const worker = (async () => {
        for (let next = 1; isRunning;) {
          const bytes = await fs.readFile(path.join(mailboxRoot, "outbox", mailboxFileName(next))).catch(() => null);
          if (!bytes) {
            await new Promise((resolve) => setTimeout(resolve, 10));
            continue;
          }
          const answer = await processMailboxRequest({ db, taskId, sequence: next, bytes, dataDir });
          await fs.writeFile(path.join(mailboxRoot, "inbox", mailboxFileName(next)), answer.responseBytes);
          next++;
        }
      })();
      cleanups.push(async () => {
        isRunning = false;
        await worker;
      });
      const client = createRelayClient({
        taskId,
        channel,
        handle,
        socketPath,
        mailboxRoot,
        timeoutMs: 60_000,
        pollIntervalMs: 10,
      });
      const endpoint = await startModelEndpoint({
        client,
        port: 0,
        model: null,
        logFile: path.join(dataDir, `endpoint-${channel}.log`),
      });
      cleanups.push(() => endpoint.close());
      const openai = new OpenAI({
        baseURL: `http://127.0.0.1:${endpoint.port}/v1`,
        apiKey: "placeholder",
        maxRetries: 0,
      });
      const viaClient = async () => {
        const answer = await client.chat(CHAT_REQUEST);
        if (answer.chat.message.content !== REPLY) throw new Error("relay client: unexpected answer");
      };
      const viaEndpoint = async () => {
        const answer = await openai.chat.completions.create({
          model: "any",
          messages: MESSAGES,
          tools: OPENAI_TOOLS,
          max_tokens: 256,
        });
        if (answer.choices[0]?.message.content !== REPLY) throw new Error("endpoint: unexpected answer");
      };
      const viaEndpointStreaming = async () => {
        const answer = await openai.chat.completions
          .stream({ model: "any", messages: MESSAGES, tools: OPENAI_TOOLS, max_tokens: 256 })
          .finalChatCompletion();
        if (answer.choices[0]?.message.content !== REPLY) throw new Error("endpoint (streaming): unexpected answer");
      };
      const calls = channel === "mailbox" ? MAILBOX_CALLS : SERIAL_CALLS;
      for (const warmUp of [viaClient, viaEndpoint, viaEndpointStreaming])
        await measure(1, Math.min(calls, 100), warmUp);
      guestRows.push({
        channel,
        client: await measure(1, calls, viaClient),
        endpoint: await measure(1, calls, viaEndpoint),
        endpointStream: await measure(1, calls, viaEndpointStreaming),
      });
    }

    const ms = (n: number) => `${n.toFixed(2)} ms`.padStart(12);
    const rps = (s: Stats) => (s.count / s.wallMs) * 1000;
    const lines = [
      `chat benchmark — upstream: loopback fake OpenAI server; ${TOOLS.length} tools per request; Node ${process.version}; ${os.cpus().length} cores`,
      "",
      `${"".padEnd(16)}${"direct p50".padStart(12)}${"chat p50".padStart(12)}${"complete p50".padStart(14)}${"chat added".padStart(12)}${"direct rps".padStart(12)}${"chat rps".padStart(12)}${"complete rps".padStart(14)}`,
      ...listenerRows.map((r) =>
        [
          r.label.padEnd(16),
          ms(r.direct.median),
          ms(r.chat.median),
          ms(r.complete.median).padStart(14),
          ms(r.chat.median - r.direct.median),
          String(Math.round(rps(r.direct))).padStart(12),
          String(Math.round(rps(r.chat))).padStart(12),
          String(Math.round(rps(r.complete))).padStart(14),
        ].join(""),
      ),
      "",
      `${"in-guest endpoint".padEnd(18)}${"client p50".padStart(12)}${"endpoint p50".padStart(14)}${"added".padStart(12)}${"stream p50".padStart(12)}${"added".padStart(12)}`,
      ...guestRows.map((r) =>
        [
          r.channel.padEnd(18),
          ms(r.client.median),
          ms(r.endpoint.median).padStart(14),
          ms(r.endpoint.median - r.client.median),
          ms(r.endpointStream.median),
          ms(r.endpointStream.median - r.client.median),
        ].join(""),
      ),
      "",
      "chat = POST /api/relay/v1/chat to the relay listener process with 4 tools (admission reserving the worst case in tokens, the OpenAI transport's translation, settlement charging the reported tokens); complete = the text-only operation through the same listener; direct = the same OpenAI wire request straight to the upstream.",
      "in-guest endpoint: the official openai SDK → guest/model-endpoint.mjs (loopback HTTP) → the guest relay client; client = the relay client's own chat() on the same channel. http: a unix socket forwarded to the listener (as the local substrate does); mailbox: request files answered by processMailboxRequest, both sides polling every 10 ms.",
    ];
    process.stdout.write(lines.join("\n") + "\n");
    const rows: TBenchRow[] = [
      ...listenerRows.flatMap((r) => [
        row(`chat with tools ${r.label}: p50 latency`, r.chat.median, "ms", {
          label: "direct upstream p50",
          value: r.direct.median,
        }),
        row(`chat with tools ${r.label}: throughput`, rps(r.chat), "rps", {
          label: "complete through the relay",
          value: rps(r.complete),
        }),
        row(`complete ${r.label}: p50 latency`, r.complete.median, "ms", {
          label: "direct upstream p50",
          value: r.direct.median,
        }),
      ]),
      ...guestRows.flatMap((r) => [
        row(`in-guest endpoint (${r.channel}): p50, openai SDK`, r.endpoint.median, "ms", {
          label: "relay client chat() p50",
          value: r.client.median,
        }),
        row(`in-guest endpoint (${r.channel}): p50, openai SDK streaming`, r.endpointStream.median, "ms", {
          label: "relay client chat() p50",
          value: r.client.median,
        }),
      ]),
    ];
    printBenchJson({ bench: "chat", ok: true, rows });
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

await withBenchDatabase("chat-bench", (db, url) => main(db, url));
