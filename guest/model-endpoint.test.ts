/**
 * The in-guest model endpoint driven by the official OpenAI and Anthropic SDKs, as a student's
 * agent would use them, over real HTTP on 127.0.0.1. The relay side is a scripted object with
 * chat() — the endpoint's own port (a relay client), not a third-party service — that records what
 * the endpoint asked and answers or refuses as the relay would. Every recorded request must satisfy
 * the relay's chat contract (ZChatRequestSchema).
 */
import fs from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import Anthropic from "@anthropic-ai/sdk";
import OpenAI from "openai";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ZChatRequestSchema } from "../lib/relay/chat-request";
import { RELAY_MAX_HTTP_BODY_BYTES, RELAY_MAX_TOKENS_CEILING } from "../lib/relay/limits";
import * as endpoint from "./model-endpoint.mjs";
import { MAX_TOKENS_CEILING, splitText } from "./model-endpoint-common.mjs";
import { RelayClientError } from "./relay-protocol.mjs";
import type { ChatAnswer, RelayUsage } from "./relay-client.mjs";

type TAnswer = { chat: ChatAnswer; usage: RelayUsage };
type TScripted = TAnswer | Error | Promise<TAnswer>;

const MODEL = "pinned-model-1";
const tmp = await fs.mkdtemp(path.join(os.tmpdir(), "model-endpoint-"));
const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});
afterAll(() => fs.rm(tmp, { recursive: true, force: true }));

/** The relay as the endpoint sees it: chat(request) answers from a script, recording each request. */
function createScriptedRelay(script: TScripted[]) {
  const requests: unknown[] = [];
  return {
    requests,
    async chat(request: unknown) {
      requests.push(structuredClone(request));
      const next = script.shift();
      if (next === undefined) throw new Error("unscripted relay call");
      if (next instanceof Error) throw next;
      return next;
    },
  };
}

async function startEndpoint(script: TScripted[], options: Record<string, unknown> = {}) {
  const relay = createScriptedRelay(script);
  const logFile = path.join(tmp, `log-${Math.random().toString(36).slice(2)}.log`);
  const started = await endpoint.startModelEndpoint({ client: relay, port: 0, model: MODEL, logFile, ...options });
  stops.push(started.close);
  const base = `http://127.0.0.1:${started.port}`;
  return {
    relay,
    logFile,
    base,
    openai: new OpenAI({ baseURL: `${base}/v1`, apiKey: "placeholder", maxRetries: 0 }),
    anthropic: new Anthropic({ baseURL: base, apiKey: "placeholder", maxRetries: 0 }),
  };
}

function expectContractRequests(requests: unknown[]) {
  for (const request of requests) expect(ZChatRequestSchema.safeParse(request).error).toBeUndefined();
}

const ADD_TOOL_SCHEMA = {
  type: "object",
  properties: { a: { type: "number" }, b: { type: "number" } },
  required: ["a", "b"],
};
const toolCallAnswer = (id = "call_add_1"): TAnswer => ({
  chat: {
    message: { role: "assistant", content: null, toolCalls: [{ id, name: "add", arguments: '{"a":2,"b":2}' }] },
    finishReason: "tool_calls",
    model: MODEL,
  },
  usage: { inputTokens: 12, outputTokens: 5 },
});
const textAnswer = (content = "2 + 2 = 4, as the add tool says. 🎉 Done."): TAnswer => ({
  chat: { message: { role: "assistant", content, toolCalls: [] }, finishReason: "stop", model: MODEL },
  usage: { inputTokens: 20, outputTokens: 9 },
});

describe("model endpoint: OpenAI SDK", () => {
  it("non-streaming: a tool call round trip reaches the relay as chat and comes back as tool_calls, then text", async () => {
    const { openai, relay } = await startEndpoint([toolCallAnswer(), textAnswer()]);
    const tools: OpenAI.Chat.ChatCompletionTool[] = [
      { type: "function", function: { name: "add", description: "adds two numbers", parameters: ADD_TOOL_SCHEMA } },
    ];
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [
      { role: "developer", content: "You are terse." },
      { role: "user", content: [{ type: "text", text: "What is 2 + 2?" }] },
    ];
    const first = await openai.chat.completions.create({
      model: "gpt-whatever",
      messages,
      tools,
      temperature: 0.2,
      max_tokens: 100,
    });
    expect(first.model).toBe(MODEL);
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    const call = first.choices[0]!.message.tool_calls![0]!;
    expect(call).toMatchObject({
      id: "call_add_1",
      type: "function",
      function: { name: "add", arguments: '{"a":2,"b":2}' },
    });
    expect(first.usage).toEqual({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });

    messages.push(first.choices[0]!.message, { role: "tool", tool_call_id: call.id, content: "4" });
    const second = await openai.chat.completions.create({
      model: "gpt-whatever",
      messages,
      tools,
      tool_choice: "auto",
    });
    expect(second.choices[0]!.message.content).toBe("2 + 2 = 4, as the add tool says. 🎉 Done.");
    expect(second.choices[0]!.finish_reason).toBe("stop");

    expectContractRequests(relay.requests);
    expect(relay.requests[0]).toEqual({
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "What is 2 + 2?" },
      ],
      tools: [{ name: "add", description: "adds two numbers", parameters: ADD_TOOL_SCHEMA }],
      toolChoice: { type: "auto" },
      maxTokens: 100,
    });
    expect((relay.requests[1] as { messages: unknown[] }).messages.slice(2)).toEqual([
      { role: "assistant", content: null, toolCalls: [{ id: "call_add_1", name: "add", arguments: '{"a":2,"b":2}' }] },
      { role: "tool", toolCallId: "call_add_1", content: "4" },
    ]);
  });

  it("streaming: the stream helper assembles tool calls, content deltas and the usage chunk", async () => {
    const { openai, relay } = await startEndpoint([toolCallAnswer(), textAnswer()]);
    const tools: OpenAI.Chat.ChatCompletionTool[] = [
      { type: "function", function: { name: "add", parameters: ADD_TOOL_SCHEMA } },
    ];
    const messages: OpenAI.Chat.ChatCompletionMessageParam[] = [{ role: "user", content: "What is 2 + 2?" }];
    const first = await openai.chat.completions
      .stream({ model: "x", messages, tools, tool_choice: "required", stream_options: { include_usage: true } })
      .finalChatCompletion();
    expect(first.choices[0]!.finish_reason).toBe("tool_calls");
    expect(first.choices[0]!.message.tool_calls).toEqual([
      { id: "call_add_1", type: "function", function: { name: "add", arguments: '{"a":2,"b":2}' } },
    ]);
    expect(first.usage).toEqual({ prompt_tokens: 12, completion_tokens: 5, total_tokens: 17 });

    messages.push(first.choices[0]!.message, { role: "tool", tool_call_id: "call_add_1", content: "4" });
    const deltas: string[] = [];
    const stream = openai.chat.completions.stream({
      model: "x",
      messages,
      tools,
      stream_options: { include_usage: true },
    });
    stream.on("content", (delta) => deltas.push(delta));
    const second = await stream.finalChatCompletion();
    expect(second.choices[0]!.message.content).toBe("2 + 2 = 4, as the add tool says. 🎉 Done.");
    expect(deltas.length).toBeGreaterThan(1);
    expect(deltas.join("")).toBe(second.choices[0]!.message.content);
    expect(second.model).toBe(MODEL);
    expectContractRequests(relay.requests);
    expect(relay.requests[0]).toMatchObject({ toolChoice: { type: "required" } });
  });

  it("lists and retrieves the pinned model", async () => {
    const { openai } = await startEndpoint([]);
    const models = [];
    for await (const model of openai.models.list()) models.push(model);
    expect(models).toMatchObject([{ id: MODEL, object: "model", owned_by: "school-core" }]);
    expect(await openai.models.retrieve(MODEL)).toMatchObject({ id: MODEL });
    await expect(openai.models.retrieve("gpt-4o")).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("refuses fields the relay cannot carry with a 400 naming them (never dropped silently)", async () => {
    const { openai, relay } = await startEndpoint([]);
    const ask = (extra: Record<string, unknown>) =>
      openai.chat.completions.create({ model: "x", messages: [{ role: "user", content: "hi" }], ...extra } as never);
    const error = await ask({ n: 2 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect((error as InstanceType<typeof OpenAI.BadRequestError>).param).toBe("n");
    expect((error as Error).message).toMatch(/^400 n: only 1 is supported/);
    for (const [extra, named] of [
      [{ logprobs: true }, /logprobs/],
      [{ response_format: { type: "json_schema", json_schema: { name: "x", schema: {} } } }, /response_format/],
      [{ stop: ["\n"] }, /stop/],
      [{ functions: [{ name: "f" }] }, /functions/],
      [{ parallel_tool_calls: false }, /parallel_tool_calls/],
      [{ audio: { voice: "alloy", format: "mp3" } }, /audio/],
      [{ some_future_field: 1 }, /some_future_field: this field is not supported/],
    ] as const) {
      await expect(ask(extra)).rejects.toThrow(named);
    }
    await expect(
      openai.chat.completions.create({
        model: "x",
        messages: [
          { role: "user", content: [{ type: "image_url", image_url: { url: "data:image/png;base64,AAAA" } }] },
        ],
      }),
    ).rejects.toThrow(/messages\[0\]\.content\[0\]\.type: "image_url" content parts are not supported/);
    // Accepted without effect: sampling hints and bookkeeping.
    expect(relay.requests).toEqual([]);
  });

  it("a relay refusal reaches the agent as the SDK's error carrying the relay's code, and is not retried", async () => {
    const refusal = new RelayClientError("RELAY_TOKENS_EXHAUSTED", "the task's output-token budget is spent", 429);
    const { base, relay } = await startEndpoint([
      refusal,
      new RelayClientError("RELAY_REFUSED", "the capability was revoked", 403),
    ]);
    // maxRetries 2 (the SDK default): x-should-retry: false must stop the retries.
    const openai = new OpenAI({ baseURL: `${base}/v1`, apiKey: "placeholder", maxRetries: 2 });
    const error = await openai.chat.completions
      .create({ model: "x", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(OpenAI.RateLimitError);
    expect(error).toMatchObject({ status: 429, code: "RELAY_TOKENS_EXHAUSTED", type: "insufficient_quota" });
    expect((error as Error).message).toContain("RELAY_TOKENS_EXHAUSTED: the task's output-token budget is spent");
    const revoked = await openai.chat.completions
      .create({ model: "x", messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(revoked).toBeInstanceOf(OpenAI.PermissionDeniedError);
    expect(revoked).toMatchObject({ code: "RELAY_REFUSED" });
    expect(relay.requests).toHaveLength(2);
  });
});

describe("model endpoint: Anthropic SDK", () => {
  const tools: Anthropic.Tool[] = [
    { name: "add", description: "adds two numbers", input_schema: ADD_TOOL_SCHEMA as Anthropic.Tool.InputSchema },
  ];

  it("non-streaming: a tool_use round trip, system text and tool_result blocks become the relay's chat", async () => {
    const { anthropic, relay } = await startEndpoint([toolCallAnswer("toolu_01"), textAnswer()]);
    const messages: Anthropic.MessageParam[] = [{ role: "user", content: "What is 2 + 2?" }];
    const first = await anthropic.messages.create({
      model: "claude-whatever",
      max_tokens: 100,
      system: "You are terse.",
      messages,
      tools,
    });
    expect(first).toMatchObject({
      type: "message",
      role: "assistant",
      model: MODEL,
      stop_reason: "tool_use",
      content: [{ type: "tool_use", id: "toolu_01", name: "add", input: { a: 2, b: 2 } }],
      usage: { input_tokens: 12, output_tokens: 5 },
    });
    messages.push(
      { role: "assistant", content: first.content },
      {
        role: "user",
        content: [{ type: "tool_result", tool_use_id: "toolu_01", content: [{ type: "text", text: "4" }] }],
      },
    );
    const second = await anthropic.messages.create({
      model: "claude-whatever",
      max_tokens: 200,
      messages,
      tools,
      tool_choice: { type: "any" },
    });
    expect(second.stop_reason).toBe("end_turn");
    expect(second.content).toMatchObject([{ type: "text", text: "2 + 2 = 4, as the add tool says. 🎉 Done." }]);

    expectContractRequests(relay.requests);
    expect(relay.requests[0]).toEqual({
      messages: [
        { role: "system", content: "You are terse." },
        { role: "user", content: "What is 2 + 2?" },
      ],
      tools: [{ name: "add", description: "adds two numbers", parameters: ADD_TOOL_SCHEMA }],
      toolChoice: { type: "auto" },
      maxTokens: 100,
    });
    expect(relay.requests[1]).toMatchObject({
      toolChoice: { type: "required" },
      maxTokens: 200,
      messages: [
        { role: "user", content: "What is 2 + 2?" },
        { role: "assistant", content: null, toolCalls: [{ id: "toolu_01", name: "add", arguments: '{"a":2,"b":2}' }] },
        { role: "tool", toolCallId: "toolu_01", content: "4" },
      ],
    });
  });

  it("streaming: messages.stream().finalMessage() assembles text and tool_use from the event sequence", async () => {
    const mixed: TAnswer = {
      chat: {
        message: {
          role: "assistant",
          content: "Let me add.",
          toolCalls: [{ id: "toolu_02", name: "add", arguments: '{"a":40,"b":2}' }],
        },
        finishReason: "tool_calls",
        model: MODEL,
      },
      usage: { inputTokens: 30, outputTokens: 11 },
    };
    const { anthropic, relay } = await startEndpoint([mixed, textAnswer("It is 42.")]);
    const texts: string[] = [];
    // Above the relay's ceiling: lowered to it (the answer would end with stop_reason max_tokens).
    const stream = anthropic.messages.stream({
      model: "x",
      max_tokens: 100_000,
      messages: [{ role: "user", content: "40 + 2?" }],
      tools,
    });
    stream.on("text", (text) => texts.push(text));
    const first = await stream.finalMessage();
    expect(first).toMatchObject({
      model: MODEL,
      stop_reason: "tool_use",
      content: [
        { type: "text", text: "Let me add." },
        { type: "tool_use", id: "toolu_02", name: "add", input: { a: 40, b: 2 } },
      ],
      usage: { input_tokens: 30, output_tokens: 11 },
    });
    expect(texts.join("")).toBe("Let me add.");

    const second = await anthropic.messages
      .stream({
        model: "x",
        max_tokens: 64,
        messages: [
          { role: "user", content: "40 + 2?" },
          { role: "assistant", content: first.content },
          { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_02", content: "42", is_error: false }] },
        ],
        tools,
      })
      .finalMessage();
    expect(second.content).toMatchObject([{ type: "text", text: "It is 42." }]);
    expect(second.stop_reason).toBe("end_turn");
    expectContractRequests(relay.requests);
    expect(relay.requests[0]).toMatchObject({ maxTokens: RELAY_MAX_TOKENS_CEILING });
  });

  it("lists the pinned model", async () => {
    const { anthropic } = await startEndpoint([]);
    const models = [];
    for await (const model of anthropic.models.list()) models.push(model);
    expect(models).toMatchObject([{ type: "model", id: MODEL, display_name: MODEL }]);
  });

  it("refuses what the relay cannot carry in Anthropic's error format, and relays refusals with their code", async () => {
    const { anthropic, relay } = await startEndpoint([
      new RelayClientError("RELAY_QUOTA_EXHAUSTED", "the task's request budget is spent", 429),
    ]);
    const image = await anthropic.messages
      .create({
        model: "x",
        max_tokens: 10,
        messages: [
          {
            role: "user",
            content: [{ type: "image", source: { type: "base64", media_type: "image/png", data: "AAAA" } }],
          },
        ],
      })
      .catch((e: unknown) => e);
    expect(image).toBeInstanceOf(Anthropic.BadRequestError);
    expect((image as InstanceType<typeof Anthropic.BadRequestError>).error).toMatchObject({
      type: "error",
      error: {
        type: "invalid_request_error",
        message: expect.stringMatching(/messages\[0\]\.content\[0\]\.type: "image" blocks are not supported/),
      },
    });
    await expect(
      anthropic.messages.create({
        model: "x",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
        stop_sequences: ["END"],
      }),
    ).rejects.toThrow(/stop_sequences/);
    await expect(
      anthropic.messages.create({
        model: "x",
        max_tokens: 10,
        messages: [{ role: "user", content: "hi" }],
        tools: [{ type: "web_search_20250305", name: "web_search" }],
      }),
    ).rejects.toThrow(/tools\[0\]\.type: only custom tools/);
    expect(relay.requests).toEqual([]);

    const spent = await anthropic.messages
      .create({ model: "x", max_tokens: 10, messages: [{ role: "user", content: "hi" }] })
      .catch((e: unknown) => e);
    expect(spent).toBeInstanceOf(Anthropic.RateLimitError);
    expect((spent as Error).message).toContain("RELAY_QUOTA_EXHAUSTED");
    expect((spent as InstanceType<typeof Anthropic.RateLimitError>).headers?.get("x-should-retry")).toBe("false");
  });
});

describe("model endpoint: bounds and failures", () => {
  it("keeps serving after agents disconnect mid-stream and while the relay call is pending", async () => {
    let answerPending!: (answer: TAnswer) => void;
    const pending = new Promise<TAnswer>((resolve) => (answerPending = resolve));
    const long = textAnswer("x".repeat(200_000));
    const { base, openai, relay } = await startEndpoint([long, pending, textAnswer("still here")]);
    const request = (signal: AbortSignal) =>
      fetch(`${base}/v1/chat/completions`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ model: "x", stream: true, messages: [{ role: "user", content: "hi" }] }),
        signal,
      });

    // Half-way through the stream.
    const midStream = new AbortController();
    const response = await request(midStream.signal);
    const reader = response.body!.getReader();
    expect(new TextDecoder().decode((await reader.read()).value)).toMatch(/^data: /);
    midStream.abort();

    // Before the relay answered: the answer arrives for a client that is gone.
    const early = new AbortController();
    const gone = request(early.signal).catch((e: unknown) => e);
    await expect.poll(() => relay.requests.length).toBe(2);
    early.abort();
    expect(await gone).toMatchObject({ name: "AbortError" });
    answerPending(textAnswer("too late"));

    const after = await openai.chat.completions.create({ model: "x", messages: [{ role: "user", content: "again" }] });
    expect(after.choices[0]!.message.content).toBe("still here");
  });

  it("caps concurrent requests, the body size (the relay's HTTP cap) and max_tokens (the relay's ceiling)", async () => {
    expect(endpoint.MAX_BODY_BYTES).toBe(RELAY_MAX_HTTP_BODY_BYTES);
    expect(MAX_TOKENS_CEILING).toBe(RELAY_MAX_TOKENS_CEILING);
    let release!: (answer: TAnswer) => void;
    const held = new Promise<TAnswer>((resolve) => (release = resolve));
    const { openai, base, logFile } = await startEndpoint([held], { maxConcurrentRequests: 1 });
    const first = openai.chat.completions.create({
      model: "x",
      messages: [{ role: "user", content: "one" }],
      max_completion_tokens: 10 ** 9,
    });
    await new Promise((r) => setTimeout(r, 50));
    await expect(
      openai.chat.completions.create({ model: "x", messages: [{ role: "user", content: "two" }] }),
    ).rejects.toBeInstanceOf(OpenAI.RateLimitError);
    release(textAnswer("one done"));
    expect((await first).choices[0]!.message.content).toBe("one done");

    const status = await new Promise<number>((resolve, reject) => {
      const req = http.request(`${base}/v1/messages`, {
        method: "POST",
        headers: { "content-type": "application/json", "content-length": String(endpoint.MAX_BODY_BYTES + 1) },
      });
      req.on("response", (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on("error", reject);
      req.write("{");
    });
    expect(status).toBe(413);
    const log = await fs.readFile(logFile, "utf8");
    expect(log).toMatch(/POST \/v1\/chat\/completions → 429/);
    expect(log).toMatch(/POST \/v1\/messages → 413/);
  });

  it("listens on loopback only and hands the agent both SDKs' base URLs", async () => {
    await expect(
      endpoint.startModelEndpoint({ client: createScriptedRelay([]), port: 0, host: "0.0.0.0" }),
    ).rejects.toThrow(/loopback only/);
    expect(endpoint.modelEndpointEnvironment(7800)).toEqual({
      OPENAI_BASE_URL: "http://127.0.0.1:7800/v1",
      OPENAI_API_KEY: "placeholder",
      ANTHROPIC_BASE_URL: "http://127.0.0.1:7800",
      ANTHROPIC_API_KEY: "placeholder",
    });
  });

  it("splits streamed text into a few deltas, never inside a surrogate pair", () => {
    expect(splitText("")).toEqual([]);
    const text = "ab🎉cd🎉ef";
    const parts: string[] = splitText(text);
    expect(parts.join("")).toBe(text);
    for (const part of parts) expect(part).toBe(Array.from(part).join("")); // well-formed on its own
    expect(parts.every((part) => !/[\ud800-\udbff]$/.test(part))).toBe(true);
  });
});
