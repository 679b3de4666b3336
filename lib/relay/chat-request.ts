/**
 * The relay's `chat` operation (issue 25): a conversation with tool calling, provider-neutral, so
 * the in-guest model endpoint can translate the OpenAI and Anthropic wire formats into it and each
 * transport can translate it to its upstream. Strict and bounded everywhere — the guest is hostile:
 * a 10,000-tool list, a 5 MB schema or 1,000-deep JSON must be a clear refusal, never work for the
 * control plane. Tool-call arguments travel as JSON text (as OpenAI carries them) and must parse as
 * a JSON object within the depth bound.
 */
import { z } from "zod";
import { RELAY_MAX_REQUEST_BYTES_CEILING, RELAY_MAX_TOKENS_CEILING } from "./limits";

/** More turns than `complete` allows: a tool loop spends two messages per tool call. */
export const CHAT_MAX_MESSAGES = 1024;
export const CHAT_MAX_TOOLS = 128;
export const CHAT_MAX_TOOL_CALLS_PER_MESSAGE = 64;
/** One tool's parameters schema, serialized. */
export const CHAT_MAX_TOOL_SCHEMA_BYTES = 16 * 1024;
/** All tool definitions together, serialized. */
export const CHAT_MAX_TOOLS_BYTES = 256 * 1024;
/** Nesting of a tool schema or of a tool call's arguments. */
export const CHAT_MAX_JSON_DEPTH = 32;
export const CHAT_MAX_ARGUMENT_BYTES = 64 * 1024;
export const CHAT_MAX_DESCRIPTION_CHARS = 4096;
/** The names both providers accept. */
export const CHAT_TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;
export const CHAT_TOOL_CALL_ID_PATTERN = /^[A-Za-z0-9_-]{1,128}$/;
export const CHAT_FINISH_REASONS = ["stop", "length", "tool_calls"] as const;

/**
 * The depth of a parsed JSON value, iteratively (a recursive walk of hostile input could exhaust
 * the stack), stopping as soon as `limit` is passed.
 */
export function jsonDepthExceeds(value: unknown, limit: number): boolean {
  const stack: { value: unknown; depth: number }[] = [{ value, depth: 0 }];
  while (stack.length > 0) {
    const { value: current, depth } = stack.pop()!;
    if (current === null || typeof current !== "object") continue;
    if (depth + 1 > limit) return true;
    const children = Array.isArray(current) ? current : Object.values(current);
    for (const child of children) stack.push({ value: child, depth: depth + 1 });
  }
  return false;
}

/** Parses tool-call arguments: a JSON object within the bounds, or null. */
export function parseToolArguments(text: string): Record<string, unknown> | null {
  if (Buffer.byteLength(text, "utf8") > CHAT_MAX_ARGUMENT_BYTES) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return null;
  if (jsonDepthExceeds(value, CHAT_MAX_JSON_DEPTH)) return null;
  return value as Record<string, unknown>;
}

const ZToolName = z.string().regex(CHAT_TOOL_NAME_PATTERN, "must be 1–64 of A–Z a–z 0–9 _ -");
const ZToolCallId = z.string().regex(CHAT_TOOL_CALL_ID_PATTERN, "must be 1–128 of A–Z a–z 0–9 _ -");
const ZContent = z.string().max(RELAY_MAX_REQUEST_BYTES_CEILING);

export const ZChatToolCallSchema = z
  .object({
    id: ZToolCallId,
    name: ZToolName,
    /** JSON text of an object, as the model wrote it. */
    arguments: z
      .string()
      .max(CHAT_MAX_ARGUMENT_BYTES)
      .refine(
        (text) => parseToolArguments(text) !== null,
        `must be a JSON object (at most ${CHAT_MAX_JSON_DEPTH} levels deep)`,
      ),
  })
  .strict();

export const ZChatMessageSchema = z.discriminatedUnion("role", [
  z.object({ role: z.literal("system"), content: ZContent }).strict(),
  z.object({ role: z.literal("user"), content: ZContent }).strict(),
  z
    .object({
      role: z.literal("assistant"),
      content: ZContent.nullable().default(null),
      toolCalls: z.array(ZChatToolCallSchema).max(CHAT_MAX_TOOL_CALLS_PER_MESSAGE).default([]),
    })
    .strict(),
  z.object({ role: z.literal("tool"), toolCallId: ZToolCallId, content: ZContent }).strict(),
]);

const ZToolParameters = z
  .record(z.string(), z.unknown())
  .refine((schema) => Buffer.byteLength(JSON.stringify(schema), "utf8") <= CHAT_MAX_TOOL_SCHEMA_BYTES, {
    message: `a tool's parameters schema must be at most ${CHAT_MAX_TOOL_SCHEMA_BYTES} bytes`,
  })
  .refine((schema) => !jsonDepthExceeds(schema, CHAT_MAX_JSON_DEPTH), {
    message: `a tool's parameters schema must be at most ${CHAT_MAX_JSON_DEPTH} levels deep`,
  });

export const ZChatToolSchema = z
  .object({
    name: ZToolName,
    description: z.string().max(CHAT_MAX_DESCRIPTION_CHARS).optional(),
    /** A JSON Schema object for the arguments. */
    parameters: ZToolParameters.default({ type: "object", properties: {} }),
  })
  .strict();

export const ZChatToolChoiceSchema = z.discriminatedUnion("type", [
  z.object({ type: z.literal("auto") }).strict(),
  z.object({ type: z.literal("none") }).strict(),
  z.object({ type: z.literal("required") }).strict(),
  z.object({ type: z.literal("tool"), name: ZToolName }).strict(),
]);

export const ZChatRequestSchema = z
  .object({
    messages: z.array(ZChatMessageSchema).min(1).max(CHAT_MAX_MESSAGES),
    tools: z.array(ZChatToolSchema).max(CHAT_MAX_TOOLS).default([]),
    toolChoice: ZChatToolChoiceSchema.default({ type: "auto" }),
    maxTokens: z.number().int().min(1).max(RELAY_MAX_TOKENS_CEILING).optional(),
  })
  .strict()
  .superRefine((request, context) => {
    if (Buffer.byteLength(JSON.stringify(request.tools), "utf8") > CHAT_MAX_TOOLS_BYTES)
      context.addIssue({
        code: "custom",
        path: ["tools"],
        message: `the tool definitions must be at most ${CHAT_MAX_TOOLS_BYTES} bytes`,
      });
    const names = new Set(request.tools.map((tool) => tool.name));
    if (names.size !== request.tools.length)
      context.addIssue({ code: "custom", path: ["tools"], message: "tool names must be unique" });
    if (request.toolChoice.type === "tool" && !names.has(request.toolChoice.name))
      context.addIssue({ code: "custom", path: ["toolChoice", "name"], message: "names a tool that is not offered" });
    if (request.toolChoice.type === "required" && request.tools.length === 0)
      context.addIssue({ code: "custom", path: ["toolChoice"], message: "required needs at least one tool" });
  });

export type TChatToolCall = z.infer<typeof ZChatToolCallSchema>;
export type TChatMessage = z.infer<typeof ZChatMessageSchema>;
export type TChatTool = z.infer<typeof ZChatToolSchema>;
export type TChatToolChoice = z.infer<typeof ZChatToolChoiceSchema>;
export type TChatRequest = z.infer<typeof ZChatRequestSchema>;
export type TChatFinishReason = (typeof CHAT_FINISH_REASONS)[number];

/**
 * The answer of one `chat` call: the assistant's turn (text, tool calls or both), why it ended, and
 * which model answered (the operator-pinned one, whatever model the agent named).
 */
export type TChatAnswer = {
  message: { role: "assistant"; content: string | null; toolCalls: TChatToolCall[] };
  finishReason: TChatFinishReason;
  model: string;
};

/**
 * Checks an upstream's tool calls against the request: every call names an offered tool and
 * carries arguments that parse as a bounded JSON object. A model that invents a tool or writes
 * broken arguments fails the call closed (RELAY_UPSTREAM_MALFORMED_TOOL_CALL), never passes it on.
 */
export function findMalformedToolCall(toolCalls: readonly TChatToolCall[], tools: readonly TChatTool[]): string | null {
  const offered = new Set(tools.map((tool) => tool.name));
  for (const call of toolCalls) {
    if (!offered.has(call.name)) return "a tool call names a tool that was not offered";
    if (parseToolArguments(call.arguments) === null) return "a tool call's arguments are not a bounded JSON object";
    if (!CHAT_TOOL_CALL_ID_PATTERN.test(call.id)) return "a tool call's id is malformed";
  }
  return null;
}
