/**
 * The chat contract is the relay's first line against a hostile guest's conversation: oversized
 * tool lists and schemas, deep or broken arguments and impossible tool choices are refused by the
 * schema itself, cheaply and without recursion a deep value could exhaust.
 */
import { describe, expect, it } from "vitest";
import {
  CHAT_MAX_JSON_DEPTH,
  findMalformedToolCall,
  jsonDepthExceeds,
  parseToolArguments,
  ZChatRequestSchema,
  type TChatTool,
} from "./chat-request";

const USER = { role: "user", content: "fix add()" } as const;

function issuesOf(value: unknown): { path: PropertyKey[]; message: string }[] {
  const parsed = ZChatRequestSchema.safeParse(value);
  expect(parsed.success).toBe(false);
  return parsed.success ? [] : parsed.error.issues;
}

/** `{"a":{"a":…}}` built by a loop, `depth` objects deep. */
function nested(depth: number): Record<string, unknown> {
  const root: Record<string, unknown> = {};
  let cursor = root;
  for (let i = 1; i < depth; i++) cursor = (cursor.a = {}) as Record<string, unknown>;
  return root;
}

describe("ZChatRequestSchema", () => {
  it("accepts a tool loop and fills the defaults (auto tool choice, an empty-object schema, no calls)", () => {
    const request = ZChatRequestSchema.parse({
      messages: [
        USER,
        { role: "assistant", toolCalls: [{ id: "call_1", name: "read_file", arguments: '{"path":"a.js"}' }] },
        { role: "tool", toolCallId: "call_1", content: "text" },
        { role: "assistant", content: "done" },
      ],
      tools: [{ name: "read_file" }],
    });
    expect(request.toolChoice).toEqual({ type: "auto" });
    expect(request.tools[0]!.parameters).toEqual({ type: "object", properties: {} });
    expect(request.messages[1]).toMatchObject({ content: null });
    expect(request.messages[3]).toMatchObject({ toolCalls: [] });
  });

  it("refuses 10,000 tools", () => {
    const tools = Array.from({ length: 10_000 }, (_, i) => ({ name: `tool_${i}` }));
    expect(issuesOf({ messages: [USER], tools }).some((issue) => issue.path[0] === "tools")).toBe(true);
  });

  it("refuses a 5 MB tool schema", () => {
    const parameters = { type: "object", description: "x".repeat(5 * 1024 * 1024) };
    const issues = issuesOf({ messages: [USER], tools: [{ name: "big", parameters }] });
    expect(issues.some((issue) => issue.path.join(".") === "tools.0.parameters")).toBe(true);
  });

  it("refuses a tool schema nested deeper than the bound", () => {
    const issues = issuesOf({
      messages: [USER],
      tools: [{ name: "deep", parameters: nested(CHAT_MAX_JSON_DEPTH + 1) }],
    });
    expect(issues.some((issue) => /levels deep/.test(issue.message))).toBe(true);
    expect(
      ZChatRequestSchema.safeParse({
        messages: [USER],
        tools: [{ name: "ok", parameters: nested(CHAT_MAX_JSON_DEPTH) }],
      }).success,
    ).toBe(true);
  });

  it.each([
    ["nested 1,000 deep", '{"a":' + "[".repeat(1000) + "]".repeat(1000) + "}"],
    ["not JSON", "not json"],
    ["JSON but not an object", "[1, 2]"],
    ["null", "null"],
  ])("refuses tool-call arguments %s", (_label, text) => {
    const issues = issuesOf({
      messages: [USER, { role: "assistant", toolCalls: [{ id: "call_1", name: "read_file", arguments: text }] }],
      tools: [{ name: "read_file" }],
    });
    expect(issues.some((issue) => issue.path.join(".") === "messages.1.toolCalls.0.arguments")).toBe(true);
  });

  it("refuses a tool choice naming a tool that is not offered, and required with no tool", () => {
    const issues = issuesOf({
      messages: [USER],
      tools: [{ name: "read_file" }],
      toolChoice: { type: "tool", name: "rm_rf" },
    });
    expect(issues).toContainEqual(
      expect.objectContaining({ path: ["toolChoice", "name"], message: "names a tool that is not offered" }),
    );
    expect(issuesOf({ messages: [USER], toolChoice: { type: "required" } })).toContainEqual(
      expect.objectContaining({ path: ["toolChoice"] }),
    );
  });

  it("refuses duplicate tool names, unknown keys and names outside the pattern", () => {
    expect(issuesOf({ messages: [USER], tools: [{ name: "a" }, { name: "a" }] })).toContainEqual(
      expect.objectContaining({ message: "tool names must be unique" }),
    );
    issuesOf({ messages: [USER], model: "gpt-5" });
    issuesOf({ messages: [USER], tools: [{ name: "a b" }] });
  });
});

describe("jsonDepthExceeds and parseToolArguments", () => {
  it("walk 100,000 levels without overflowing the stack", () => {
    const deep = nested(100_000);
    expect(jsonDepthExceeds(deep, CHAT_MAX_JSON_DEPTH)).toBe(true);
    expect(jsonDepthExceeds(nested(CHAT_MAX_JSON_DEPTH), CHAT_MAX_JSON_DEPTH)).toBe(false);
    // Within the byte bound (60 KB), so the text is parsed and the depth check is what refuses it.
    expect(parseToolArguments("[".repeat(30_000) + "]".repeat(30_000))).toBeNull();
    expect(parseToolArguments('{"a":' + "[".repeat(30_000) + "]".repeat(30_000) + "}")).toBeNull();
  });

  it("parse a bounded JSON object, and nothing else", () => {
    expect(parseToolArguments('{"path":"a.js"}')).toEqual({ path: "a.js" });
    expect(parseToolArguments("not json")).toBeNull();
    expect(parseToolArguments('"text"')).toBeNull();
    expect(parseToolArguments(JSON.stringify({ a: "x".repeat(70 * 1024) }))).toBeNull();
  });
});

describe("findMalformedToolCall", () => {
  const tools: TChatTool[] = [{ name: "read_file", parameters: { type: "object" } }];

  it("passes calls of offered tools with object arguments", () => {
    expect(findMalformedToolCall([{ id: "call_1", name: "read_file", arguments: "{}" }], tools)).toBeNull();
  });

  it.each([
    [{ id: "call_1", name: "delete_repository", arguments: "{}" }, /not offered/],
    [{ id: "call_1", name: "read_file", arguments: "not json" }, /arguments/],
    [{ id: "call 1", name: "read_file", arguments: "{}" }, /id/],
  ])("names what is wrong with %j", (call, why) => {
    expect(findMalformedToolCall([call], tools)).toMatch(why);
  });
});
