/**
 * The scripted transport's chat answers (issue 25): a demo agent's tool loop runs on canned turns,
 * matched on the user message or the tool result being answered, with deterministic call ids —
 * and a canned tool call is held to the same rules as a model's.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ZChatRequestSchema } from "../chat-request";
import { chooseScriptedCompletion, createScriptedTransport, loadScriptFile } from "./scripted-transport";

const dir = await fs.mkdtemp(path.join(os.tmpdir(), "scripted-transport-"));
afterAll(() => fs.rm(dir, { recursive: true, force: true }));

async function writeScript(script: unknown): Promise<string> {
  const file = path.join(dir, `script-${Math.random().toString(36).slice(2)}.json`);
  await fs.writeFile(file, JSON.stringify(script));
  return file;
}

const TOOLS = [{ name: "read_file" }, { name: "write_file" }];

const SCRIPT = {
  default: "I have nothing scripted for this.",
  entries: [
    {
      pattern: "add\\(\\)",
      completion: {
        content: "Reading the file.",
        toolCalls: [{ name: "read_file", arguments: { path: "src/add.js" } }],
      },
    },
    {
      on: "tool",
      pattern: "return a - b",
      completion: {
        toolCalls: [
          { name: "write_file", arguments: { path: "src/add.js", content: "export const add = (a, b) => a + b;\n" } },
          { name: "read_file", arguments: { path: "src/add.js" } },
        ],
      },
    },
    { on: "tool", pattern: "a \\+ b", completion: "Fixed: add() now adds." },
  ],
};

function request(messages: unknown[], tools: unknown[] = TOOLS) {
  return ZChatRequestSchema.parse({ messages, tools });
}

describe("scripted transport: chat", () => {
  it("walks a tool loop: the user message, then each tool result, picks the turn; call ids never repeat", async () => {
    const transport = createScriptedTransport({ scriptFile: await writeScript(SCRIPT), maxResponseBytes: 10_000 });
    const user = { role: "user", content: "add() subtracts" };

    const first = await transport.chat({ request: request([user]) });
    expect(first).toEqual({
      message: {
        role: "assistant",
        content: "Reading the file.",
        toolCalls: [{ id: "call_1", name: "read_file", arguments: '{"path":"src/add.js"}' }],
      },
      finishReason: "tool_calls",
      model: "scripted",
    });

    const afterRead = [
      user,
      first.message,
      { role: "tool", toolCallId: "call_1", content: "export const add = (a, b) => { return a - b; };" },
    ];
    const second = await transport.chat({ request: request(afterRead) });
    expect(second.finishReason).toBe("tool_calls");
    expect(second.message.content).toBeNull();
    expect(second.message.toolCalls.map((call) => [call.id, call.name])).toEqual([
      ["call_2", "write_file"],
      ["call_3", "read_file"],
    ]);
    expect(JSON.parse(second.message.toolCalls[0]!.arguments)).toEqual({
      path: "src/add.js",
      content: "export const add = (a, b) => a + b;\n",
    });

    const afterWrite = [
      ...afterRead,
      second.message,
      { role: "tool", toolCallId: "call_2", content: "written" },
      { role: "tool", toolCallId: "call_3", content: "export const add = (a, b) => a + b;" },
    ];
    expect(await transport.chat({ request: request(afterWrite) })).toEqual({
      message: { role: "assistant", content: "Fixed: add() now adds.", toolCalls: [] },
      finishReason: "stop",
      model: "scripted",
    });
  });

  it("matches user entries only on user messages and tool entries only on tool results, else the default", async () => {
    const transport = createScriptedTransport({ scriptFile: await writeScript(SCRIPT), maxResponseBytes: 10_000 });
    // The tool result mentions add(), but only a tool entry can answer a tool result.
    const answer = await transport.chat({
      request: request([
        { role: "user", content: "hello" },
        { role: "assistant", toolCalls: [{ id: "x1", name: "read_file", arguments: "{}" }] },
        { role: "tool", toolCallId: "x1", content: "add() is here" },
      ]),
    });
    expect(answer.message).toEqual({ role: "assistant", content: "I have nothing scripted for this.", toolCalls: [] });
  });

  it("fails a scripted call of a tool the agent did not offer closed (RELAY_UPSTREAM_MALFORMED_TOOL_CALL)", async () => {
    const transport = createScriptedTransport({ scriptFile: await writeScript(SCRIPT), maxResponseBytes: 10_000 });
    await expect(
      transport.chat({ request: request([{ role: "user", content: "add() subtracts" }], [{ name: "write_file" }]) }),
    ).rejects.toMatchObject({ code: "RELAY_UPSTREAM_MALFORMED_TOOL_CALL" });
    await expect(
      transport.chat({ request: request([{ role: "user", content: "add() subtracts" }], []) }),
    ).rejects.toMatchObject({
      code: "RELAY_UPSTREAM_MALFORMED_TOOL_CALL",
    });
  });

  it("refuses an oversized canned turn whole (RELAY_TOO_LARGE)", async () => {
    const scriptFile = await writeScript({
      default: { toolCalls: [{ name: "write_file", arguments: { content: "x".repeat(5_000) } }] },
      entries: [],
    });
    await expect(
      createScriptedTransport({ scriptFile, maxResponseBytes: 1_000 }).chat({
        request: request([{ role: "user", content: "hi" }]),
      }),
    ).rejects.toMatchObject({ code: "RELAY_TOO_LARGE" });
  });

  it("complete answers a tool-call entry with its text, and fails one with no text rather than answering empty", async () => {
    const transport = createScriptedTransport({ scriptFile: await writeScript(SCRIPT), maxResponseBytes: 10_000 });
    expect(await transport.complete({ messages: [{ role: "user", content: "add() subtracts" }] })).toEqual({
      content: "Reading the file.",
    });
    const script = await loadScriptFile(
      await writeScript({ default: { toolCalls: [{ name: "read_file", arguments: {} }] }, entries: [] }),
    );
    expect(() => chooseScriptedCompletion(script, "anything")).toThrow(
      expect.objectContaining({ code: "RELAY_UPSTREAM_FAILED" }),
    );
  });

  it("still loads plain-text scripts and the demo script (the only script file in the repository)", async () => {
    const plain = await loadScriptFile(
      await writeScript({ default: "d", entries: [{ pattern: "x", completion: "y" }] }),
    );
    expect(plain.entries[0]).toEqual({ pattern: "x", on: "user", completion: "y" });
    await loadScriptFile(path.resolve(import.meta.dirname, "../../demo/scripted-completions.json"));
  });

  it.each([
    [{ default: {}, entries: [] }],
    [{ default: { content: "x", extra: 1 }, entries: [] }],
    [{ default: "x", entries: [{ pattern: "p", on: "assistant", completion: "y" }] }],
    [{ default: { toolCalls: [{ name: "t", arguments: "not an object" }] }, entries: [] }],
    [
      {
        default: {
          toolCalls: [{ name: "t", arguments: JSON.parse('{"a":' + "[".repeat(100) + "]".repeat(100) + "}") }],
        },
        entries: [],
      },
    ],
  ])("refuses the script %j", async (script) => {
    await expect(loadScriptFile(await writeScript(script))).rejects.toMatchObject({ code: "RELAY_UPSTREAM_FAILED" });
  });
});
