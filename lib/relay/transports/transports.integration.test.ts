import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ZRelayUpstreamSettingSchema, type TRelayUpstreamSetting } from "../../contract/relay-upstream-setting";
import { ZChatRequestSchema } from "../chat-request";
import { startFakeAnthropicServer, startFakeOpenAiServer } from "../testing/fake-upstream-servers";
import { createAnthropicTransport } from "./anthropic-transport";
import { closeUpstreamAgents } from "./http-upstream";
import { createOpenAiTransport } from "./openai-transport";
import { chooseScriptedCompletion, createScriptedTransport, loadScriptFile } from "./scripted-transport";
import { ensureCredentialsDir } from "../../secrets/credential-file";

/** The test's DATA_DIR: credential files live in its credentials/ directory. */
const dir = await fs.mkdtemp(path.join(os.tmpdir(), "relay-transport-"));
const credentialFile = path.join(ensureCredentialsDir(dir), "credential");
await fs.writeFile(credentialFile, "test-credential-0123456789\n");
const openai = await startFakeOpenAiServer({
  credential: "test-credential-0123456789",
  reply: (m) => `openai saw ${m.length} messages, last: ${m.at(-1)?.content}`,
});
const anthropic = await startFakeAnthropicServer({
  credential: "test-credential-0123456789",
  reply: (m) => `anthropic saw ${m.map((x) => x.role).join(",")}`,
});

afterAll(async () => {
  await closeUpstreamAgents();
  await openai.close();
  await anthropic.close();
  await fs.rm(dir, { recursive: true, force: true });
});

function openAiSetting(overrides: Record<string, unknown> = {}) {
  return ZRelayUpstreamSettingSchema.parse({
    kind: "openai",
    endpoint: openai.endpoint,
    model: "gpt-test",
    credentialFile,
    requestTimeoutMs: 1000,
    ...overrides,
  }) as Extract<TRelayUpstreamSetting, { kind: "openai" }>;
}

const MESSAGES = [
  { role: "system" as const, content: "be brief" },
  { role: "user" as const, content: "hi" },
];

describe("OpenAI-compatible transport (real HTTP, loopback fake speaking the wire protocol)", () => {
  it("sends the operator-pinned model and credential, and returns the completion", async () => {
    openai.mode = "ok";
    const result = await createOpenAiTransport(openAiSetting(), { dataDir: dir }).complete({
      messages: MESSAGES,
      maxTokens: 33,
    });
    expect(result).toEqual({ content: "openai saw 2 messages, last: hi", inputTokens: 11, outputTokens: 7 });
    const seen = openai.requests.at(-1)!;
    expect(seen.authorization).toBe("Bearer test-credential-0123456789");
    expect(seen.body).toMatchObject({ model: "gpt-test", max_tokens: 33, messages: MESSAGES });
  });

  it.each([
    ["status500", /http_status 500/],
    ["malformed", /malformed_response/],
    ["close", /connection_failed/],
    ["hang", /timeout/],
  ] as const)("maps upstream %s to RELAY_UPSTREAM_FAILED without upstream text", async (mode, reason) => {
    openai.mode = mode;
    const error = await createOpenAiTransport(openAiSetting(), { dataDir: dir })
      .complete({ messages: MESSAGES })
      .catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "RELAY_UPSTREAM_FAILED", message: expect.stringMatching(reason) });
    expect(String((error as Error).message)).not.toMatch(/exploded|127\.0\.0\.1|test-credential/);
    openai.mode = "ok";
  });

  it("refuses an oversized streamed answer whole (RELAY_TOO_LARGE), reading no more than the cap", async () => {
    openai.mode = "oversized";
    await expect(
      createOpenAiTransport(openAiSetting({ maxResponseBytes: 64 * 1024 }), { dataDir: dir }).complete({
        messages: MESSAGES,
      }),
    ).rejects.toMatchObject({ code: "RELAY_TOO_LARGE" });
    openai.mode = "ok";
  });

  it("reads the credential file at call time: a rotated file takes effect, a missing or unsafe one fails closed", async () => {
    const rotating = path.join(dir, "credentials", "rotating");
    await fs.writeFile(rotating, "wrong-credential-aaaaaaaa");
    const transport = createOpenAiTransport(openAiSetting({ credentialFile: rotating }), { dataDir: dir });
    const error = await transport.complete({ messages: MESSAGES }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: "RELAY_UPSTREAM_FAILED", message: expect.stringMatching(/http_status 401/) });
    expect((error as Error).message).not.toContain("wrong-credential");
    await fs.writeFile(rotating, "test-credential-0123456789");
    expect((await transport.complete({ messages: MESSAGES })).content).toMatch(/openai saw/);
    await fs.writeFile(rotating, "test-credential\r\nx-injected: 1");
    await expect(transport.complete({ messages: MESSAGES })).rejects.toMatchObject({
      message: expect.stringMatching(/credential_unavailable/),
    });
    await fs.rm(rotating);
    await expect(transport.complete({ messages: MESSAGES })).rejects.toMatchObject({
      code: "CREDENTIAL_FILE_REFUSED",
      message: expect.stringMatching(/cannot be resolved \(ENOENT\)/),
    });
  });

  it("never follows a redirect to another host", async () => {
    const http = await import("node:http");
    const redirector = http.createServer((_req, res) => {
      res.writeHead(307, { location: `${openai.endpoint}` });
      res.end();
    });
    await new Promise<void>((r) => redirector.listen(0, "127.0.0.1", r));
    const port = (redirector.address() as { port: number }).port;
    const before = openai.requests.length;
    await expect(
      createOpenAiTransport(openAiSetting({ endpoint: `http://127.0.0.1:${port}/v1/chat/completions` }), {
        dataDir: dir,
      }).complete({
        messages: MESSAGES,
      }),
    ).rejects.toMatchObject({
      message: expect.stringMatching(/http_status 307/),
    });
    expect(openai.requests.length).toBe(before);
    await new Promise((r) => redirector.close(r));
  });
});

describe("Anthropic messages transport", () => {
  const setting = () =>
    ZRelayUpstreamSettingSchema.parse({
      kind: "anthropic",
      endpoint: anthropic.endpoint,
      model: "claude-test",
      credentialFile,
      requestTimeoutMs: 1000,
    }) as Extract<TRelayUpstreamSetting, { kind: "anthropic" }>;

  it("sends x-api-key and anthropic-version, lifts system messages, returns the text", async () => {
    const result = await createAnthropicTransport(setting(), { dataDir: dir }).complete({ messages: MESSAGES });
    expect(result).toEqual({ content: "anthropic saw system,user", inputTokens: 11, outputTokens: 7 });
    const seen = anthropic.requests.at(-1)!;
    expect(seen.apiKey).toBe("test-credential-0123456789");
    expect(seen.authorization).toBeUndefined();
    expect(seen.body).toMatchObject({
      model: "claude-test",
      system: "be brief",
      messages: [{ role: "user", content: "hi" }],
    });
  });

  it("maps a 500 to RELAY_UPSTREAM_FAILED", async () => {
    anthropic.mode = "status500";
    await expect(
      createAnthropicTransport(setting(), { dataDir: dir }).complete({ messages: MESSAGES }),
    ).rejects.toMatchObject({
      code: "RELAY_UPSTREAM_FAILED",
    });
    anthropic.mode = "ok";
  });
});

const READ_FILE_SCHEMA = { type: "object", properties: { path: { type: "string" } }, required: ["path"] };
const TOOLS = [
  { name: "read_file", description: "Reads a file of the repository", parameters: READ_FILE_SCHEMA },
  { name: "list_dir", parameters: READ_FILE_SCHEMA },
];

/** A tool loop in progress: the model called two tools, both answered, and the user spoke again. */
function chatRequest(overrides: Record<string, unknown> = {}) {
  return ZChatRequestSchema.parse({
    messages: [
      { role: "system", content: "be brief" },
      { role: "system", content: "use the tools" },
      { role: "user", content: "what is in the repository?" },
      {
        role: "assistant",
        content: "Let me look.",
        toolCalls: [
          { id: "call_1", name: "read_file", arguments: '{"path":"README.md"}' },
          { id: "call_2", name: "list_dir", arguments: '{"path":"."}' },
        ],
      },
      { role: "tool", toolCallId: "call_1", content: "# Demo" },
      { role: "tool", toolCallId: "call_2", content: "README.md\nsrc" },
      { role: "user", content: "now fix add()" },
    ],
    tools: TOOLS,
    maxTokens: 50,
    ...overrides,
  });
}

/** Argument text nested 1,000 deep: the relay must refuse it without walking it recursively. */
const DEEP_ARGUMENTS = '{"a":' + "[".repeat(1000) + "]".repeat(1000) + "}";

function openAiAnswer(message: Record<string, unknown>, finishReason: string | null = "stop") {
  return () => ({
    id: "chatcmpl-fake",
    object: "chat.completion",
    model: "the-model-the-upstream-says",
    system_fingerprint: "fp_extra_field",
    choices: [{ index: 0, message: { role: "assistant", ...message }, finish_reason: finishReason, logprobs: null }],
    usage: { prompt_tokens: 40, completion_tokens: 9, total_tokens: 49 },
  });
}

function openAiToolCall(name: string, args: string, type = "function") {
  return { id: "call_up1", type, function: { name, arguments: args } };
}

describe("OpenAI-compatible transport: chat with tools", () => {
  afterAll(() => {
    openai.respond = null;
  });

  it("sends the conversation, tools and tool choice in OpenAI's wire format and reads back the tool calls", async () => {
    openai.respond = openAiAnswer(
      { content: null, tool_calls: [openAiToolCall("read_file", '{"path":"src/add.js"}')] },
      "tool_calls",
    );
    const answer = await createOpenAiTransport(openAiSetting(), { dataDir: dir }).chat({ request: chatRequest() });
    expect(answer).toEqual({
      message: {
        role: "assistant",
        content: null,
        toolCalls: [{ id: "call_up1", name: "read_file", arguments: '{"path":"src/add.js"}' }],
      },
      finishReason: "tool_calls",
      model: "gpt-test",
      inputTokens: 40,
      outputTokens: 9,
    });
    const seen = openai.requests.at(-1)!;
    expect(seen.authorization).toBe("Bearer test-credential-0123456789");
    expect(seen.body).toEqual({
      model: "gpt-test",
      messages: [
        { role: "system", content: "be brief" },
        { role: "system", content: "use the tools" },
        { role: "user", content: "what is in the repository?" },
        {
          role: "assistant",
          content: "Let me look.",
          tool_calls: [
            { id: "call_1", type: "function", function: { name: "read_file", arguments: '{"path":"README.md"}' } },
            { id: "call_2", type: "function", function: { name: "list_dir", arguments: '{"path":"."}' } },
          ],
        },
        { role: "tool", tool_call_id: "call_1", content: "# Demo" },
        { role: "tool", tool_call_id: "call_2", content: "README.md\nsrc" },
        { role: "user", content: "now fix add()" },
      ],
      tools: [
        {
          type: "function",
          function: { name: "read_file", description: "Reads a file of the repository", parameters: READ_FILE_SCHEMA },
        },
        { type: "function", function: { name: "list_dir", parameters: READ_FILE_SCHEMA } },
      ],
      tool_choice: "auto",
      max_tokens: 50,
      stream: false,
    });
  });

  it.each([
    [{ type: "none" }, "none"],
    [{ type: "required" }, "required"],
    [
      { type: "tool", name: "list_dir" },
      { type: "function", function: { name: "list_dir" } },
    ],
  ])("translates tool choice %j", async (toolChoice, wire) => {
    openai.respond = openAiAnswer({ content: "ok" });
    await createOpenAiTransport(openAiSetting(), { dataDir: dir }).chat({ request: chatRequest({ toolChoice }) });
    expect(openai.requests.at(-1)!.body).toMatchObject({ tool_choice: wire });
  });

  it("sends neither tools nor tool choice when no tool is offered, and the default output bound", async () => {
    openai.respond = openAiAnswer({ content: "hello" });
    const answer = await createOpenAiTransport(openAiSetting(), { dataDir: dir }).chat({
      request: ZChatRequestSchema.parse({
        messages: [{ role: "user", content: "hi" }, { role: "assistant" }, { role: "user", content: "?" }],
      }),
    });
    expect(answer).toMatchObject({ message: { content: "hello", toolCalls: [] }, finishReason: "stop" });
    expect(openai.requests.at(-1)!.body).toEqual({
      model: "gpt-test",
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: null },
        { role: "user", content: "?" },
      ],
      max_tokens: 4096,
      stream: false,
    });
  });

  it.each([
    ["stop", false, "stop"],
    ["length", false, "length"],
    ["content_filter", false, "stop"],
    ["tool_calls", true, "tool_calls"],
    ["function_call", true, "tool_calls"],
    ["stop", true, "tool_calls"],
  ] as const)("maps finish_reason %s (tool call: %s) to %s", async (reason, withCall, expected) => {
    openai.respond = openAiAnswer(
      { content: withCall ? null : "text", ...(withCall ? { tool_calls: [openAiToolCall("list_dir", "{}")] } : {}) },
      reason,
    );
    expect(
      (await createOpenAiTransport(openAiSetting(), { dataDir: dir }).chat({ request: chatRequest() })).finishReason,
    ).toBe(expected);
  });

  it.each([
    ["an unknown finish reason", openAiAnswer({ content: "text" }, "something_new")],
    ["no finish reason", openAiAnswer({ content: "text" }, null)],
    ["tool_calls without a call", openAiAnswer({ content: "text" }, "tool_calls")],
    ["neither content nor tool calls", openAiAnswer({ content: null }, "stop")],
    ["no choices", () => ({ choices: [] })],
  ])("refuses %s as malformed_response", async (_label, respond) => {
    openai.respond = respond;
    await expect(
      createOpenAiTransport(openAiSetting(), { dataDir: dir }).chat({ request: chatRequest() }),
    ).rejects.toMatchObject({
      code: "RELAY_UPSTREAM_FAILED",
      message: expect.stringMatching(/malformed_response/),
    });
  });

  it.each([
    ["arguments that are not JSON", openAiToolCall("read_file", "not json")],
    ["arguments that are not an object", openAiToolCall("read_file", "[1,2]")],
    ["arguments nested 1,000 deep", openAiToolCall("read_file", DEEP_ARGUMENTS)],
    ["a tool that was not offered", openAiToolCall("delete_repository", "{}")],
    ["a call that is not a function call", openAiToolCall("read_file", "{}", "custom")],
    ["a malformed call id", { ...openAiToolCall("read_file", "{}"), id: "call id with spaces" }],
  ])("fails a tool call with %s closed (RELAY_UPSTREAM_MALFORMED_TOOL_CALL)", async (_label, call) => {
    openai.respond = openAiAnswer({ content: null, tool_calls: [call] }, "tool_calls");
    await expect(
      createOpenAiTransport(openAiSetting(), { dataDir: dir }).chat({ request: chatRequest() }),
    ).rejects.toMatchObject({
      code: "RELAY_UPSTREAM_MALFORMED_TOOL_CALL",
    });
  });

  it("maps upstream failures of chat to RELAY_UPSTREAM_FAILED like complete", async () => {
    openai.mode = "status500";
    await expect(
      createOpenAiTransport(openAiSetting(), { dataDir: dir }).chat({ request: chatRequest() }),
    ).rejects.toMatchObject({
      code: "RELAY_UPSTREAM_FAILED",
      message: expect.stringMatching(/http_status 500/),
    });
    openai.mode = "ok";
  });
});

function anthropicAnswer(content: unknown[], stopReason: string | null) {
  return () => ({
    id: "msg_fake",
    type: "message",
    role: "assistant",
    model: "the-model-the-upstream-says",
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: { input_tokens: 40, output_tokens: 9, cache_read_input_tokens: 0 },
  });
}

describe("Anthropic messages transport: chat with tools", () => {
  const setting = () =>
    ZRelayUpstreamSettingSchema.parse({
      kind: "anthropic",
      endpoint: anthropic.endpoint,
      model: "claude-test",
      credentialFile,
      requestTimeoutMs: 1000,
    }) as Extract<TRelayUpstreamSetting, { kind: "anthropic" }>;

  afterAll(() => {
    anthropic.respond = null;
  });

  it("lifts system, sends tool_use and merged tool_result turns, and reads back text and tool calls", async () => {
    anthropic.respond = anthropicAnswer(
      [
        { type: "thinking", thinking: "hmm", signature: "x" },
        { type: "text", text: "I'll read " },
        { type: "text", text: "the file." },
        { type: "tool_use", id: "toolu_01A", name: "read_file", input: { path: "src/add.js" } },
      ],
      "tool_use",
    );
    const answer = await createAnthropicTransport(setting(), { dataDir: dir }).chat({ request: chatRequest() });
    expect(answer).toEqual({
      message: {
        role: "assistant",
        content: "I'll read the file.",
        toolCalls: [{ id: "toolu_01A", name: "read_file", arguments: '{"path":"src/add.js"}' }],
      },
      finishReason: "tool_calls",
      model: "claude-test",
      inputTokens: 40,
      outputTokens: 9,
    });
    const seen = anthropic.requests.at(-1)!;
    expect(seen.apiKey).toBe("test-credential-0123456789");
    expect(seen.body).toEqual({
      model: "claude-test",
      max_tokens: 50,
      system: "be brief\n\nuse the tools",
      messages: [
        { role: "user", content: "what is in the repository?" },
        {
          role: "assistant",
          content: [
            { type: "text", text: "Let me look." },
            { type: "tool_use", id: "call_1", name: "read_file", input: { path: "README.md" } },
            { type: "tool_use", id: "call_2", name: "list_dir", input: { path: "." } },
          ],
        },
        {
          role: "user",
          content: [
            { type: "tool_result", tool_use_id: "call_1", content: "# Demo" },
            { type: "tool_result", tool_use_id: "call_2", content: "README.md\nsrc" },
            { type: "text", text: "now fix add()" },
          ],
        },
      ],
      tools: [
        { name: "read_file", description: "Reads a file of the repository", input_schema: READ_FILE_SCHEMA },
        { name: "list_dir", input_schema: READ_FILE_SCHEMA },
      ],
      tool_choice: { type: "auto" },
    });
  });

  it("keeps user and assistant alternating: consecutive user turns merge, an empty assistant turn is dropped", async () => {
    anthropic.respond = anthropicAnswer([{ type: "text", text: "fine" }], "end_turn");
    await createAnthropicTransport(setting(), { dataDir: dir }).chat({
      request: ZChatRequestSchema.parse({
        messages: [
          { role: "user", content: "one" },
          { role: "assistant", content: null },
          { role: "user", content: "two" },
          { role: "assistant", content: "", toolCalls: [{ id: "t1", name: "list_dir", arguments: "{}" }] },
          { role: "tool", toolCallId: "t1", content: "a\nb" },
        ],
        tools: TOOLS,
      }),
    });
    expect(anthropic.requests.at(-1)!.body).toMatchObject({
      max_tokens: 4096,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "one" },
            { type: "text", text: "two" },
          ],
        },
        { role: "assistant", content: [{ type: "tool_use", id: "t1", name: "list_dir", input: {} }] },
        { role: "user", content: [{ type: "tool_result", tool_use_id: "t1", content: "a\nb" }] },
      ],
    });
    expect(anthropic.requests.at(-1)!.body).not.toHaveProperty("system");
  });

  it.each([
    [{ type: "none" }, { type: "none" }],
    [{ type: "required" }, { type: "any" }],
    [
      { type: "tool", name: "list_dir" },
      { type: "tool", name: "list_dir" },
    ],
  ])("translates tool choice %j", async (toolChoice, wire) => {
    anthropic.respond = anthropicAnswer([{ type: "text", text: "ok" }], "end_turn");
    await createAnthropicTransport(setting(), { dataDir: dir }).chat({ request: chatRequest({ toolChoice }) });
    expect(anthropic.requests.at(-1)!.body).toMatchObject({ tool_choice: wire });
  });

  it("sends neither tools nor tool choice when no tool is offered", async () => {
    anthropic.respond = anthropicAnswer([{ type: "text", text: "ok" }], "end_turn");
    await createAnthropicTransport(setting(), { dataDir: dir }).chat({
      request: ZChatRequestSchema.parse({ messages: [{ role: "user", content: "hi" }] }),
    });
    expect(anthropic.requests.at(-1)!.body).toEqual({
      model: "claude-test",
      max_tokens: 4096,
      messages: [{ role: "user", content: "hi" }],
    });
  });

  it.each([
    ["end_turn", false, "stop"],
    ["stop_sequence", false, "stop"],
    ["max_tokens", false, "length"],
    ["tool_use", true, "tool_calls"],
    ["end_turn", true, "tool_calls"],
  ] as const)("maps stop_reason %s (tool call: %s) to %s", async (reason, withCall, expected) => {
    anthropic.respond = anthropicAnswer(
      withCall ? [{ type: "tool_use", id: "toolu_1", name: "list_dir", input: {} }] : [{ type: "text", text: "t" }],
      reason,
    );
    expect(
      (await createAnthropicTransport(setting(), { dataDir: dir }).chat({ request: chatRequest() })).finishReason,
    ).toBe(expected);
  });

  it.each([
    ["an unknown stop reason", anthropicAnswer([{ type: "text", text: "t" }], "refusal")],
    ["no stop reason", anthropicAnswer([{ type: "text", text: "t" }], null)],
    ["tool_use without a call", anthropicAnswer([{ type: "text", text: "t" }], "tool_use")],
    ["neither text nor tool calls", anthropicAnswer([], "end_turn")],
    [
      "a tool_use block without an id",
      anthropicAnswer([{ type: "tool_use", name: "list_dir", input: {} }], "tool_use"),
    ],
  ])("refuses %s as malformed_response", async (_label, respond) => {
    anthropic.respond = respond;
    await expect(
      createAnthropicTransport(setting(), { dataDir: dir }).chat({ request: chatRequest() }),
    ).rejects.toMatchObject({
      code: "RELAY_UPSTREAM_FAILED",
      message: expect.stringMatching(/malformed_response/),
    });
  });

  const deepInput: Record<string, unknown> = {};
  let cursor = deepInput;
  for (let i = 0; i < 1000; i++) cursor = (cursor.a = {}) as Record<string, unknown>;

  it.each([
    ["input that is not an object", { type: "tool_use", id: "toolu_1", name: "read_file", input: "not json" }],
    ["input nested 1,000 deep", { type: "tool_use", id: "toolu_1", name: "read_file", input: deepInput }],
    ["a tool that was not offered", { type: "tool_use", id: "toolu_1", name: "delete_repository", input: {} }],
  ])("fails a tool call with %s closed (RELAY_UPSTREAM_MALFORMED_TOOL_CALL)", async (_label, block) => {
    anthropic.respond = anthropicAnswer([block], "tool_use");
    await expect(
      createAnthropicTransport(setting(), { dataDir: dir }).chat({ request: chatRequest() }),
    ).rejects.toMatchObject({
      code: "RELAY_UPSTREAM_MALFORMED_TOOL_CALL",
    });
  });
});

describe("scripted transport", () => {
  it("answers with the first entry whose pattern matches the last user message, else the default", async () => {
    const scriptFile = path.join(dir, "script.json");
    await fs.writeFile(
      scriptFile,
      JSON.stringify({
        default: "no idea",
        entries: [
          { pattern: "add\\(\\)", completion: "first" },
          { pattern: "add", completion: "second" },
        ],
      }),
    );
    const transport = createScriptedTransport({ scriptFile, maxResponseBytes: 1000 });
    expect(await transport.complete({ messages: [{ role: "user", content: "add() is broken" }] })).toEqual({
      content: "first",
    });
    expect(await transport.complete({ messages: [{ role: "user", content: "add is broken" }] })).toEqual({
      content: "second",
    });
    expect(
      await transport.complete({
        messages: [
          { role: "user", content: "add() is broken" },
          { role: "assistant", content: "?" },
          { role: "user", content: "other" },
        ],
      }),
    ).toEqual({ content: "no idea" });
    expect(transport.kind).toBe("scripted");
  });

  it("fails closed on a missing or invalid script and refuses an oversized canned answer", async () => {
    await expect(
      createScriptedTransport({ scriptFile: path.join(dir, "missing.json"), maxResponseBytes: 1000 }).complete({
        messages: MESSAGES,
      }),
    ).rejects.toMatchObject({ code: "RELAY_UPSTREAM_FAILED" });
    const bad = path.join(dir, "bad.json");
    await fs.writeFile(bad, JSON.stringify({ default: "x", entries: [{ pattern: "(", completion: "y" }] }));
    await expect(loadScriptFile(bad)).rejects.toMatchObject({ code: "RELAY_UPSTREAM_FAILED" });
    const big = path.join(dir, "big.json");
    await fs.writeFile(big, JSON.stringify({ default: "b".repeat(2000), entries: [] }));
    await expect(
      createScriptedTransport({ scriptFile: big, maxResponseBytes: 1000 }).complete({ messages: MESSAGES }),
    ).rejects.toMatchObject({ code: "RELAY_TOO_LARGE" });
  });

  it("the demo script fixes demo/calculator issue #1 with one whole-file block", async () => {
    const script = await loadScriptFile(path.resolve(import.meta.dirname, "../../demo/scripted-completions.json"));
    const answer = chooseScriptedCompletion(
      script,
      "Issue #1: add() subtracts instead of adding\n\nCalling add(2, 3) returns -1. It should return 5.",
    );
    const blocks = [...answer.matchAll(/^```file (.+)$/gm)].map((m) => m[1]);
    expect(blocks).toEqual(["src/add.js"]);
    expect(answer).toContain("return a + b;");
    expect(answer).not.toContain("return a - b;");
    expect(chooseScriptedCompletion(script, "something unrelated")).toBe(script.default);
  });
});

describe("upstream setting schema", () => {
  it.each([
    [{ kind: "openai", endpoint: "ftp://x/", model: "m", credentialFile: "/c" }],
    [{ kind: "openai", endpoint: "http://user:pw@x/", model: "m", credentialFile: "/c" }],
    [{ kind: "openai", endpoint: "https://x/", model: "m", credentialFile: "relative/path" }],
    [{ kind: "openai", endpoint: "https://x/", model: "m", credentialFile: "/c", credential: "sk-inline" }],
    // The credential goes to the endpoint as a header: plain http only to loopback (issue 27, item 5).
    [{ kind: "openai", endpoint: "http://x/", model: "m", credentialFile: "/c" }],
    [{ kind: "anthropic", endpoint: "http://10.1.2.3:8080/v1/messages", model: "m", credentialFile: "/c" }],
    [{ kind: "openai", endpoint: "http://[2001:db8::1]/v1", model: "m", credentialFile: "/c" }],
    [{ kind: "scripted" }],
    [{ kind: "proxy", endpoint: "http://x/" }],
  ])("refuses %j", (value) => {
    expect(ZRelayUpstreamSettingSchema.safeParse(value).success).toBe(false);
  });

  it.each([
    "https://api.example.com/v1",
    "http://127.0.0.1:9/v1",
    "http://127.200.0.1/v1",
    "http://localhost:9/v1",
    "http://[::1]:9/v1",
  ])("accepts %s", (endpoint) => {
    expect(
      ZRelayUpstreamSettingSchema.safeParse({ kind: "openai", endpoint, model: "m", credentialFile: "/c" }).success,
    ).toBe(true);
  });

  it("a plain-http non-loopback endpoint that reaches a transport anyway is refused before anything is sent", async () => {
    const setting = { ...openAiSetting(), endpoint: "http://upstream.example.invalid/v1/chat/completions" };
    await expect(
      createOpenAiTransport(setting, { dataDir: dir }).complete({ messages: MESSAGES }),
    ).rejects.toMatchObject({
      code: "ENDPOINT_INSECURE",
      message: expect.stringContaining("must be https"),
    });
  });
});
