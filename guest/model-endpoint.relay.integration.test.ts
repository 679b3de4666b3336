/**
 * The whole model path an agent uses (issue 25), with nothing faked but the model provider: the
 * official `openai` and `@anthropic-ai/sdk` clients, unmodified, streaming and not, with tools →
 * the in-guest model endpoint → the guest relay client over each channel (the mailbox, answered by
 * the real processMailboxRequest; HTTP over a unix socket, answered by the relay listener's real
 * handler) → relayCall on real PostgreSQL → the real OpenAI or Anthropic transport → a loopback
 * server speaking that provider's wire format, which plays a model that calls a tool once and then
 * answers. Tokens are counted on the capability as the upstream reported them.
 */
import Anthropic from "@anthropic-ai/sdk";
import fs from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import OpenAI from "openai";
import { afterAll, describe, expect, it } from "vitest";
import { issueCapability } from "../lib/relay/issue-capability";
import { mailboxFileName } from "../lib/relay/mailbox-protocol";
import { processMailboxRequest } from "../lib/relay/process-mailbox-request";
import { createRelayRequestListener } from "../lib/relay/relay-http";
import {
  startFakeAnthropicServer,
  startFakeOpenAiServer,
  type TFakeUpstream,
} from "../lib/relay/testing/fake-upstream-servers";
import { createRelayTestTask } from "../lib/relay/testing/relay-fixtures";
import { closeUpstreamAgents } from "../lib/relay/transports/http-upstream";
import { setRelayUpstream } from "../lib/relay/upstream-setting";
import { createTestDatabase } from "../lib/testing/test-database";
import { createRelayClient } from "./relay-client.mjs";
import { startModelEndpoint } from "./model-endpoint.mjs";

const CREDENTIAL = "sk-upstream-credential-never-in-the-guest";
const READ_FILE_TOOL = {
  name: "read_file",
  description: "Reads a file of the repository",
  parameters: { type: "object" as const, properties: { path: { type: "string" } }, required: ["path"] },
};

/** The OpenAI-format model: a tool call first, then (once it sees the tool's result) the answer. */
function openAiModel(body: Record<string, unknown>) {
  const messages = body.messages as { role: string; content: string }[];
  const toolResult = messages.find((m) => m.role === "tool");
  const message = toolResult
    ? { role: "assistant", content: `The bug: ${toolResult.content}. Use a + b.` }
    : {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_read_1", type: "function", function: { name: "read_file", arguments: '{"path":"src/add.js"}' } },
        ],
      };
  return {
    id: "chatcmpl-upstream",
    object: "chat.completion",
    created: 1,
    model: body.model,
    choices: [{ index: 0, message, finish_reason: toolResult ? "stop" : "tool_calls" }],
    usage: { prompt_tokens: 50, completion_tokens: 12, total_tokens: 62 },
  };
}

/** The same model on the Anthropic wire: a tool_use block, then text once a tool_result arrives. */
function anthropicModel(body: Record<string, unknown>) {
  const messages = body.messages as { role: string; content: unknown }[];
  const toolResult = messages
    .flatMap((m) => (Array.isArray(m.content) ? (m.content as { type: string; content?: unknown }[]) : []))
    .find((block) => block.type === "tool_result");
  const content = toolResult
    ? [{ type: "text", text: `The bug: ${JSON.stringify(toolResult.content)}. Use a + b.` }]
    : [{ type: "tool_use", id: "toolu_read_1", name: "read_file", input: { path: "src/add.js" } }];
  return {
    id: "msg_upstream",
    type: "message",
    role: "assistant",
    model: body.model,
    content,
    stop_reason: toolResult ? "end_turn" : "tool_use",
    usage: { input_tokens: 40, output_tokens: 9 },
  };
}

describe("official SDKs → in-guest endpoint → relay channel → provider wire format", async () => {
  const { db } = await createTestDatabase();
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "endpoint-relay-"));
  // The test's DATA_DIR: the operator's credential lives in its credentials/ directory, as the rule requires.
  const dataDir = tmp;
  await fs.mkdir(path.join(dataDir, "credentials"), { mode: 0o700 });
  const credentialFile = path.join(dataDir, "credentials", "upstream");
  await fs.writeFile(credentialFile, CREDENTIAL, { mode: 0o600 });
  const openAiUpstream = await startFakeOpenAiServer({ credential: CREDENTIAL });
  openAiUpstream.respond = openAiModel;
  const anthropicUpstream = await startFakeAnthropicServer({ credential: CREDENTIAL });
  anthropicUpstream.respond = anthropicModel;
  const socketPath = path.join(tmp, "relay.sock");
  const relayServer = http.createServer(createRelayRequestListener({ db, dataDir }));
  await new Promise<void>((resolve) => relayServer.listen(socketPath, resolve));
  const stops: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    for (const stop of stops.reverse()) await stop();
    await new Promise((resolve) => relayServer.close(resolve));
    await openAiUpstream.close();
    await anthropicUpstream.close();
    await closeUpstreamAgents();
    await fs.rm(tmp, { recursive: true, force: true });
  });

  async function pinUpstream(kind: "openai" | "anthropic", upstream: TFakeUpstream) {
    await setRelayUpstream({
      db,
      value: { kind, endpoint: upstream.endpoint, model: `${kind}-pinned-model`, credentialFile },
      via: "test",
      reason: "test setup",
      dataDir,
    });
  }

  /** The worker's side of the mailbox: answer each numbered request file with the real relay. */
  function startMailboxWorker(root: string, taskId: string) {
    let isRunning = true;
    const loop = (async () => {
      for (let next = 1; isRunning;) {
        const bytes = await fs.readFile(path.join(root, "outbox", mailboxFileName(next))).catch(() => null);
        if (!bytes) {
          await new Promise((resolve) => setTimeout(resolve, 10));
          continue;
        }
        const answer = await processMailboxRequest({ db, taskId, sequence: next, bytes, dataDir });
        await fs.writeFile(path.join(root, "inbox", mailboxFileName(next)), answer.responseBytes);
        next++;
      }
    })();
    const stop = async () => {
      isRunning = false;
      await loop;
    };
    stops.push(stop);
    return stop;
  }

  /** A task, its capability and the guest side: the relay client on the channel, the endpoint on a free loopback port. */
  async function guestFor(channel: "mailbox" | "http", model: string) {
    const { taskId } = await createRelayTestTask(db, undefined, channel);
    const { handle, capabilityId } = await issueCapability(
      { db },
      {
        taskId,
        allowedOps: ["complete", "chat"],
        maxRequests: 20,
        maxBytes: 10_000_000,
        maxRequestBytes: 1_000_000,
        maxResponseBytes: 1_000_000,
        maxTokens: 100_000,
        ttlSeconds: 600,
      },
    );
    const mailboxRoot = path.join(tmp, `mailbox-${taskId}`);
    if (channel === "mailbox") startMailboxWorker(mailboxRoot, taskId);
    const client = createRelayClient({
      taskId,
      channel,
      handle,
      socketPath,
      mailboxRoot,
      timeoutMs: 20_000,
      pollIntervalMs: 10,
    });
    const endpoint = await startModelEndpoint({
      client,
      port: 0,
      model,
      logFile: path.join(tmp, `endpoint-${taskId}.log`),
    });
    stops.push(() => endpoint.close());
    return { capabilityId, port: endpoint.port as number };
  }

  async function tokensOf(capabilityId: string) {
    const cap = await db.relayCapability.findUniqueOrThrow({ where: { id: capabilityId } });
    return Number(cap.tokensUsed);
  }

  for (const channel of ["mailbox", "http"] as const) {
    for (const stream of [false, true]) {
      it(`openai SDK, ${stream ? "streaming" : "not streaming"}, tools, over the ${channel} channel`, async () => {
        await pinUpstream("openai", openAiUpstream);
        const { capabilityId, port } = await guestFor(channel, "openai-pinned-model");
        const openai = new OpenAI({ baseURL: `http://127.0.0.1:${port}/v1`, apiKey: "placeholder", maxRetries: 0 });
        const tools = [{ type: "function" as const, function: READ_FILE_TOOL }];
        const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
          { role: "user", content: "add() subtracts instead of adding" },
        ];
        const ask = async () =>
          stream
            ? openai.chat.completions
                .stream({
                  model: "gpt-whatever-the-agent-names",
                  messages,
                  tools,
                  stream_options: { include_usage: true },
                })
                .finalChatCompletion()
            : openai.chat.completions.create({ model: "gpt-whatever-the-agent-names", messages, tools });
        const first = await ask();
        const call = first.choices[0]!.message.tool_calls?.[0];
        expect(first.choices[0]!.finish_reason).toBe("tool_calls");
        expect(first.model).toBe("openai-pinned-model");
        expect(call).toMatchObject({
          id: "call_read_1",
          function: { name: "read_file", arguments: '{"path":"src/add.js"}' },
        });
        messages.push(first.choices[0]!.message as OpenAI.Chat.ChatCompletionMessageParam);
        messages.push({ role: "tool", tool_call_id: call!.id, content: "return a - b" });
        const second = await ask();
        expect(second.choices[0]!.message.content).toBe("The bug: return a - b. Use a + b.");
        expect(second.usage).toMatchObject({ prompt_tokens: 50, completion_tokens: 12 });
        expect(await tokensOf(capabilityId)).toBe(2 * 62);
        // What reached the provider: the pinned model, the tools, the tool turn — and the operator's credential only there.
        const sent = openAiUpstream.requests.at(-1)!;
        expect(sent.authorization).toBe(`Bearer ${CREDENTIAL}`);
        expect(sent.body).toMatchObject({
          model: "openai-pinned-model",
          tools: [{ type: "function", function: { name: "read_file" } }],
          messages: [
            { role: "user" },
            { role: "assistant", tool_calls: [{ id: "call_read_1" }] },
            { role: "tool", tool_call_id: "call_read_1" },
          ],
        });
      });

      it(`anthropic SDK, ${stream ? "streaming" : "not streaming"}, tools, over the ${channel} channel`, async () => {
        await pinUpstream("anthropic", anthropicUpstream);
        const { capabilityId, port } = await guestFor(channel, "anthropic-pinned-model");
        const anthropic = new Anthropic({ baseURL: `http://127.0.0.1:${port}`, apiKey: "placeholder", maxRetries: 0 });
        const tools = [
          {
            name: READ_FILE_TOOL.name,
            description: READ_FILE_TOOL.description,
            input_schema: READ_FILE_TOOL.parameters,
          },
        ];
        const messages: Anthropic.MessageParam[] = [{ role: "user", content: "add() subtracts instead of adding" }];
        const ask = async () =>
          stream
            ? anthropic.messages.stream({ model: "claude-whatever", max_tokens: 1024, messages, tools }).finalMessage()
            : anthropic.messages.create({ model: "claude-whatever", max_tokens: 1024, messages, tools });
        const first = await ask();
        expect(first.stop_reason).toBe("tool_use");
        expect(first.model).toBe("anthropic-pinned-model");
        const toolUse = first.content.find((block) => block.type === "tool_use");
        expect(toolUse).toMatchObject({ id: "toolu_read_1", name: "read_file", input: { path: "src/add.js" } });
        messages.push({ role: "assistant", content: first.content });
        messages.push({
          role: "user",
          content: [{ type: "tool_result", tool_use_id: toolUse!.id, content: "return a - b" }],
        });
        const second = await ask();
        expect(second.stop_reason).toBe("end_turn");
        expect(second.content[0]).toMatchObject({ type: "text", text: expect.stringContaining("return a - b") });
        expect(second.usage).toMatchObject({ input_tokens: 40, output_tokens: 9 });
        expect(await tokensOf(capabilityId)).toBe(2 * 49);
        const sent = anthropicUpstream.requests.at(-1)!;
        expect(sent.apiKey).toBe(CREDENTIAL);
        expect(sent.body).toMatchObject({
          model: "anthropic-pinned-model",
          tools: [{ name: "read_file", input_schema: { type: "object" } }],
          messages: [
            { role: "user" },
            { role: "assistant", content: [{ type: "tool_use", id: "toolu_read_1" }] },
            { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_read_1" }] },
          ],
        });
      });
    }
  }

  it("a spent token budget reaches the SDK as its error with the relay's code, not retried", async () => {
    await pinUpstream("openai", openAiUpstream);
    const { taskId } = await createRelayTestTask(db, undefined, "http");
    const { handle } = await issueCapability(
      { db },
      {
        taskId,
        allowedOps: ["chat"],
        maxRequests: 20,
        maxBytes: 10_000_000,
        maxRequestBytes: 1_000_000,
        maxResponseBytes: 1_000_000,
        maxTokens: 1_000,
        ttlSeconds: 600,
      },
    );
    const client = createRelayClient({ taskId, channel: "http", handle, socketPath, timeoutMs: 20_000 });
    const endpoint = await startModelEndpoint({
      client,
      port: 0,
      model: null,
      logFile: path.join(tmp, `endpoint-${taskId}.log`),
    });
    stops.push(() => endpoint.close());
    const before = openAiUpstream.requests.length;
    const openai = new OpenAI({
      baseURL: `http://127.0.0.1:${endpoint.port}/v1`,
      apiKey: "placeholder",
      maxRetries: 2,
    });
    const failure = await openai.chat.completions
      .create({ model: "gpt", max_tokens: 4096, messages: [{ role: "user", content: "hello" }] })
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.RateLimitError);
    expect(String((failure as Error).message)).toContain("RELAY_TOKENS_EXHAUSTED");
    expect(openAiUpstream.requests.length).toBe(before);
  });
});
