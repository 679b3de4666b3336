/**
 * The scripted transport: canned answers from an operator-owned file, for demos and tests without
 * a model. `{ "default": <answer>, "entries": [{ "pattern": "<regex>", "on"?: "user" | "tool",
 * "completion": <answer> }] }` — an answer is plain text, or (for `chat`, issue 25) an assistant
 * turn `{ "content"?: "…", "toolCalls"?: [{ "name": "…", "arguments": { … } }] }`. The message
 * answered is the last user message or tool result; the first entry for that kind of message
 * (`on`, default `user`) whose pattern matches its text answers, else the default. Its answers are
 * labelled `scripted` in the usage body, the call rows and the operator view: a scripted answer
 * must never pass for a model's.
 */
import fs from "node:fs/promises";
import { z } from "zod";
import {
  CHAT_MAX_JSON_DEPTH,
  CHAT_MAX_TOOL_CALLS_PER_MESSAGE,
  findMalformedToolCall,
  jsonDepthExceeds,
  type TChatMessage,
  type TChatToolCall,
} from "../chat-request";
import { upstreamFailure, upstreamMalformedToolCall, upstreamTooLarge, type TRelayTransport } from "./transport";

const MAX_SCRIPT_FILE_BYTES = 1024 * 1024;
/** The pattern is the operator's, the text it runs on is the guest's: bound the text a regex sees. */
const MAX_MATCHED_CHARS = 64 * 1024;

/** An assistant turn: text, tool calls or both (ids are generated at answer time). */
const ZScriptedChatAnswerSchema = z
  .object({
    content: z.string().optional(),
    toolCalls: z
      .array(
        z
          .object({
            name: z.string(),
            // Bounded at load, so a deep script cannot make serializing its arguments overflow the stack.
            arguments: z
              .record(z.string(), z.unknown())
              .refine((args) => !jsonDepthExceeds(args, CHAT_MAX_JSON_DEPTH), "is nested too deep"),
          })
          .strict(),
      )
      .max(CHAT_MAX_TOOL_CALLS_PER_MESSAGE)
      .optional(),
  })
  .strict()
  .refine(
    (answer) => answer.content !== undefined || (answer.toolCalls?.length ?? 0) > 0,
    "needs content or toolCalls",
  );

/** Plain text (what every script before issue 25 holds) or an assistant turn. */
const ZScriptedAnswerSchema = z.union([z.string(), ZScriptedChatAnswerSchema]);

export const ZScriptFileSchema = z
  .object({
    default: ZScriptedAnswerSchema,
    entries: z
      .array(
        z
          .object({
            pattern: z
              .string()
              .min(1)
              .max(2000)
              .refine((p) => isValidRegex(p), "is not a valid regular expression"),
            /** Which message the pattern runs on: the last user message (default) or the tool result answered. */
            on: z.enum(["user", "tool"]).default("user"),
            completion: ZScriptedAnswerSchema,
          })
          .strict(),
      )
      .max(1000),
  })
  .strict();

export type TScriptFile = z.infer<typeof ZScriptFileSchema>;
export type TScriptedAnswer = z.infer<typeof ZScriptedAnswerSchema>;

function isValidRegex(pattern: string): boolean {
  try {
    new RegExp(pattern);
    return true;
  } catch {
    return false;
  }
}

/** Reads and validates a script file; used at call time and by `relay upstream set` to refuse a bad file early. */
export async function loadScriptFile(file: string): Promise<TScriptFile> {
  let text: string;
  try {
    const stat = await fs.stat(file);
    if (!stat.isFile() || stat.size > MAX_SCRIPT_FILE_BYTES) throw new Error("not a bounded regular file");
    text = await fs.readFile(file, "utf8");
  } catch {
    throw upstreamFailure("scripted", "script_unavailable");
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw upstreamFailure("scripted", "script_unavailable");
  }
  const parsed = ZScriptFileSchema.safeParse(json);
  if (!parsed.success) throw upstreamFailure("scripted", "script_unavailable");
  return parsed.data;
}

/** Pure: the answer a script gives to the message it answers (a user message or a tool result). */
export function chooseScriptedAnswer(
  script: TScriptFile,
  answered: { on: "user" | "tool"; text: string },
): TScriptedAnswer {
  const text = answered.text.slice(0, MAX_MATCHED_CHARS);
  for (const entry of script.entries) {
    if (entry.on === answered.on && new RegExp(entry.pattern).test(text)) return entry.completion;
  }
  return script.default;
}

/**
 * Pure: the text a script gives to a `complete` conversation. An answer of tool calls gives its
 * text; one with no text cannot be a completion, and says so rather than answering empty.
 */
export function chooseScriptedCompletion(script: TScriptFile, lastUserMessage: string): string {
  const answer = chooseScriptedAnswer(script, { on: "user", text: lastUserMessage });
  if (typeof answer === "string") return answer;
  if (answer.content !== undefined) return answer.content;
  throw upstreamFailure("scripted", "malformed_response");
}

/**
 * Pure: a scripted answer as an assistant turn. Tool-call ids number on from the calls already in
 * the conversation, so they are deterministic and never repeat within it.
 */
export function toScriptedChatMessage(
  answer: TScriptedAnswer,
  messages: readonly TChatMessage[],
): { role: "assistant"; content: string | null; toolCalls: TChatToolCall[] } {
  if (typeof answer === "string") return { role: "assistant", content: answer, toolCalls: [] };
  const earlier = messages.reduce((count, m) => count + (m.role === "assistant" ? m.toolCalls.length : 0), 0);
  return {
    role: "assistant",
    content: answer.content ?? null,
    toolCalls: (answer.toolCalls ?? []).map((call, index) => ({
      id: `call_${earlier + index + 1}`,
      name: call.name,
      arguments: JSON.stringify(call.arguments),
    })),
  };
}

export function createScriptedTransport(setting: { scriptFile: string; maxResponseBytes: number }): TRelayTransport {
  return {
    kind: "scripted",
    async complete({ messages }) {
      const script = await loadScriptFile(setting.scriptFile);
      const lastUser = [...messages].reverse().find((m) => m.role === "user")?.content ?? "";
      const content = chooseScriptedCompletion(script, lastUser);
      if (Buffer.byteLength(content, "utf8") > setting.maxResponseBytes)
        throw upstreamTooLarge("scripted", setting.maxResponseBytes);
      return { content };
    },
    async chat({ request }) {
      const script = await loadScriptFile(setting.scriptFile);
      const answered = [...request.messages].reverse().find((m) => m.role === "user" || m.role === "tool");
      const answer = chooseScriptedAnswer(script, {
        on: answered?.role === "tool" ? "tool" : "user",
        text: answered?.content ?? "",
      });
      const message = toScriptedChatMessage(answer, request.messages);
      if (Buffer.byteLength(JSON.stringify(message), "utf8") > setting.maxResponseBytes)
        throw upstreamTooLarge("scripted", setting.maxResponseBytes);
      // The operator's script is checked like a model: a call to a tool the agent did not offer is not passed on.
      const malformed = findMalformedToolCall(message.toolCalls, request.tools);
      if (malformed !== null) throw upstreamMalformedToolCall("scripted", malformed);
      return { message, finishReason: message.toolCalls.length > 0 ? "tool_calls" : "stop", model: "scripted" };
    },
  };
}
