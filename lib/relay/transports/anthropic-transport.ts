/**
 * Anthropic messages (`POST <endpoint>` with `x-api-key` and `anthropic-version`). System messages
 * become the top-level `system` field, as the Messages API requires. `chat` translates the
 * provider-neutral conversation (lib/relay/chat-request.ts): tool calls become `tool_use` blocks,
 * tool results `tool_result` blocks in a user turn, and turns of one role merge, since the API
 * wants user and assistant to alternate. An answer we cannot read fails closed.
 */
import { z } from "zod";
import type { TRelayUpstreamSetting } from "../../contract/relay-upstream-setting";
import {
  CHAT_MAX_JSON_DEPTH,
  findMalformedToolCall,
  jsonDepthExceeds,
  parseToolArguments,
  type TChatFinishReason,
  type TChatRequest,
  type TChatToolCall,
} from "../chat-request";
import { postJson, readCredentialFile } from "./http-upstream";
import { upstreamFailure, upstreamMalformedToolCall, type TChatOutput, type TRelayTransport } from "./transport";

type TAnthropicSetting = Extract<TRelayUpstreamSetting, { kind: "anthropic" }>;

const ZUsage = z.object({
  input_tokens: z.number().int().nonnegative(),
  output_tokens: z.number().int().nonnegative(),
});

const ZAnthropicResponseSchema = z.object({
  type: z.literal("message"),
  content: z.array(z.object({ type: z.string(), text: z.string().optional() })),
  usage: ZUsage.optional(),
});

/** Not strict: the API adds block types and fields; we read text and tool_use blocks and the stop reason. */
const ZAnthropicChatResponseSchema = z.object({
  type: z.literal("message"),
  content: z.array(
    z.object({
      type: z.string(),
      text: z.string().optional(),
      id: z.string().optional(),
      name: z.string().optional(),
      input: z.unknown().optional(),
    }),
  ),
  stop_reason: z.string().nullish(),
  usage: ZUsage.nullish(),
});

/** Anthropic's stop reasons, mapped to ours; any other (null, `refusal`, `pause_turn`, a new one) is refused. */
const ANTHROPIC_STOP_REASONS: Readonly<Record<string, TChatFinishReason>> = {
  end_turn: "stop",
  stop_sequence: "stop",
  max_tokens: "length",
  tool_use: "tool_calls",
};

type TAnthropicBlock =
  | { type: "text"; text: string }
  | { type: "tool_use"; id: string; name: string; input: Record<string, unknown> }
  | { type: "tool_result"; tool_use_id: string; content: string };

/** The wire body of a chat request: operator-pinned model, `system` lifted, turns alternating, tools only when offered. */
function buildAnthropicChatBody(setting: TAnthropicSetting, request: TChatRequest): Record<string, unknown> {
  const system = request.messages
    .filter((m) => m.role === "system")
    .map((m) => m.content)
    .join("\n\n");
  const turns: { role: "user" | "assistant"; blocks: TAnthropicBlock[] }[] = [];
  for (const message of request.messages) {
    let role: "user" | "assistant";
    let blocks: TAnthropicBlock[];
    switch (message.role) {
      case "system":
        continue;
      case "user":
        role = "user";
        blocks = [{ type: "text", text: message.content }];
        break;
      case "tool":
        role = "user";
        blocks = [{ type: "tool_result", tool_use_id: message.toolCallId, content: message.content }];
        break;
      case "assistant":
        role = "assistant";
        blocks = [
          // The API refuses an empty text block; a turn of tool calls alone carries none.
          ...(message.content ? [{ type: "text" as const, text: message.content }] : []),
          ...message.toolCalls.map((call) => ({
            type: "tool_use" as const,
            id: call.id,
            name: call.name,
            // The request schema already refused arguments that are not a bounded JSON object.
            input: parseToolArguments(call.arguments) ?? {},
          })),
        ];
        break;
    }
    // An assistant turn with neither text nor calls says nothing, and the API refuses empty content.
    if (blocks.length === 0) continue;
    const last = turns.at(-1);
    if (last?.role === role) last.blocks.push(...blocks);
    else turns.push({ role, blocks });
  }
  const choice = request.toolChoice;
  return {
    model: setting.model,
    max_tokens: request.maxTokens ?? setting.defaultMaxTokens,
    ...(system ? { system } : {}),
    // A turn that is one text block stays a plain string, as `complete` sends it.
    messages: turns.map((turn) => ({
      role: turn.role,
      content: turn.blocks.length === 1 && turn.blocks[0]!.type === "text" ? turn.blocks[0]!.text : turn.blocks,
    })),
    ...(request.tools.length > 0
      ? {
          tools: request.tools.map((tool) => ({
            name: tool.name,
            ...(tool.description !== undefined ? { description: tool.description } : {}),
            input_schema: tool.parameters,
          })),
          tool_choice:
            choice.type === "tool"
              ? { type: "tool", name: choice.name }
              : { type: choice.type === "required" ? "any" : choice.type },
        }
      : {}),
  };
}

/** Reads the wire answer as one assistant turn; every ambiguity is a refusal, never a guess. */
function readAnthropicChatAnswer(setting: TAnthropicSetting, request: TChatRequest, json: unknown): TChatOutput {
  const parsed = ZAnthropicChatResponseSchema.safeParse(json);
  if (!parsed.success) throw upstreamFailure("anthropic", "malformed_response");
  const texts: string[] = [];
  const toolCalls: TChatToolCall[] = [];
  for (const block of parsed.data.content) {
    if (block.type === "text") {
      if (typeof block.text !== "string") throw upstreamFailure("anthropic", "malformed_response");
      texts.push(block.text);
    } else if (block.type === "tool_use") {
      if (typeof block.id !== "string" || typeof block.name !== "string")
        throw upstreamFailure("anthropic", "malformed_response");
      const input = block.input;
      // Depth first: serializing hostile nesting is recursive work we refuse to do.
      if (
        input === null ||
        typeof input !== "object" ||
        Array.isArray(input) ||
        jsonDepthExceeds(input, CHAT_MAX_JSON_DEPTH)
      )
        throw upstreamMalformedToolCall("anthropic", "a tool call's arguments are not a bounded JSON object");
      toolCalls.push({ id: block.id, name: block.name, arguments: JSON.stringify(input) });
    }
    // Other blocks (thinking …) are not part of the turn we pass on.
  }
  const malformed = findMalformedToolCall(toolCalls, request.tools);
  if (malformed !== null) throw upstreamMalformedToolCall("anthropic", malformed);
  let finishReason = parsed.data.stop_reason == null ? undefined : ANTHROPIC_STOP_REASONS[parsed.data.stop_reason];
  if (finishReason === undefined) throw upstreamFailure("anthropic", "malformed_response");
  const content = texts.length > 0 ? texts.join("") : null;
  if (content === null && toolCalls.length === 0) throw upstreamFailure("anthropic", "malformed_response");
  if (finishReason === "tool_calls" && toolCalls.length === 0) throw upstreamFailure("anthropic", "malformed_response");
  if (finishReason === "stop" && toolCalls.length > 0) finishReason = "tool_calls";
  return {
    message: { role: "assistant", content, toolCalls },
    finishReason,
    model: setting.model,
    inputTokens: parsed.data.usage?.input_tokens,
    outputTokens: parsed.data.usage?.output_tokens,
  };
}

/** `dataDir`: whose DATA_DIR/credentials/ the credential file must be in. */
export function createAnthropicTransport(
  setting: TAnthropicSetting,
  { dataDir }: { dataDir: string },
): TRelayTransport {
  async function post(body: unknown, signal: AbortSignal | undefined): Promise<unknown> {
    const credential = await readCredentialFile("anthropic", setting.credentialFile, dataDir);
    return postJson({
      kind: "anthropic",
      endpoint: setting.endpoint,
      headers: { "x-api-key": credential, "anthropic-version": setting.anthropicVersion },
      body,
      connectTimeoutMs: setting.connectTimeoutMs,
      requestTimeoutMs: setting.requestTimeoutMs,
      maxResponseBytes: setting.maxResponseBytes,
      signal,
    });
  }
  return {
    kind: "anthropic",
    async complete({ messages, maxTokens, signal }) {
      const system = messages
        .filter((m) => m.role === "system")
        .map((m) => m.content)
        .join("\n\n");
      const turns = messages.filter((m) => m.role !== "system").map((m) => ({ role: m.role, content: m.content }));
      const json = await post(
        {
          model: setting.model,
          max_tokens: maxTokens ?? setting.defaultMaxTokens,
          ...(system ? { system } : {}),
          messages: turns,
        },
        signal,
      );
      const parsed = ZAnthropicResponseSchema.safeParse(json);
      if (!parsed.success) throw upstreamFailure("anthropic", "malformed_response");
      const texts = parsed.data.content
        .filter((block) => block.type === "text" && typeof block.text === "string")
        .map((block) => block.text!);
      // A reply with no text block is not an empty success: it is an answer we cannot use.
      if (texts.length === 0) throw upstreamFailure("anthropic", "malformed_response");
      return {
        content: texts.join(""),
        inputTokens: parsed.data.usage?.input_tokens,
        outputTokens: parsed.data.usage?.output_tokens,
      };
    },
    async chat({ request, signal }) {
      const json = await post(buildAnthropicChatBody(setting, request), signal);
      return readAnthropicChatAnswer(setting, request, json);
    },
  };
}
