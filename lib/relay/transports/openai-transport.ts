/**
 * OpenAI-compatible chat completions (`POST <endpoint>` with `Authorization: Bearer`), non-streaming
 * JSON read through the bounded reader. The endpoint and model come from the operator setting only.
 * `chat` translates the provider-neutral conversation (lib/relay/chat-request.ts) to the wire
 * format and back; an answer we cannot read as exactly one assistant turn fails closed.
 */
import { z } from "zod";
import type { TRelayUpstreamSetting } from "../../contract/relay-upstream-setting";
import { findMalformedToolCall, type TChatFinishReason, type TChatRequest, type TChatToolCall } from "../chat-request";
import { postJson, readCredentialFile } from "./http-upstream";
import { upstreamFailure, upstreamMalformedToolCall, type TChatOutput, type TRelayTransport } from "./transport";

type TOpenAiSetting = Extract<TRelayUpstreamSetting, { kind: "openai" }>;

/** Only what we use is validated; upstreams add fields freely, so this one is not strict. */
const ZOpenAiResponseSchema = z.object({
  choices: z.array(z.object({ message: z.object({ content: z.string() }) })).min(1),
  usage: z
    .object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() })
    .optional(),
});

/** The chat answer, not strict either; a tool call of another type than `function` is read, then refused as not offered. */
const ZOpenAiChatResponseSchema = z.object({
  choices: z
    .array(
      z.object({
        message: z.object({
          content: z.string().nullish(),
          tool_calls: z
            .array(
              z.object({
                id: z.string(),
                type: z.string().optional(),
                function: z.object({ name: z.string(), arguments: z.string() }).optional(),
              }),
            )
            .nullish(),
        }),
        finish_reason: z.string().nullish(),
      }),
    )
    .min(1),
  usage: z
    .object({ prompt_tokens: z.number().int().nonnegative(), completion_tokens: z.number().int().nonnegative() })
    .nullish(),
});

/**
 * OpenAI's finish reasons, mapped to ours. `function_call` is the legacy name of `tool_calls`;
 * `content_filter` ends the turn like `stop` (the text is what the filter left). Anything else
 * (null, a new reason) is an answer we do not understand: absent from this table, so refused.
 */
const OPENAI_FINISH_REASONS: Readonly<Record<string, TChatFinishReason>> = {
  stop: "stop",
  length: "length",
  tool_calls: "tool_calls",
  function_call: "tool_calls",
  content_filter: "stop",
};

/** The wire body of a chat request: operator-pinned model, the conversation, tools only when offered. */
function buildOpenAiChatBody(setting: TOpenAiSetting, request: TChatRequest): Record<string, unknown> {
  const messages = request.messages.map((message) => {
    switch (message.role) {
      case "system":
      case "user":
        return { role: message.role, content: message.content };
      case "assistant":
        return {
          role: "assistant",
          content: message.content,
          // OpenAI refuses an empty tool_calls array: a plain turn carries none.
          ...(message.toolCalls.length > 0
            ? {
                tool_calls: message.toolCalls.map((call) => ({
                  id: call.id,
                  type: "function",
                  function: { name: call.name, arguments: call.arguments },
                })),
              }
            : {}),
        };
      case "tool":
        return { role: "tool", tool_call_id: message.toolCallId, content: message.content };
    }
  });
  const choice = request.toolChoice;
  return {
    model: setting.model,
    messages,
    ...(request.tools.length > 0
      ? {
          tools: request.tools.map((tool) => ({
            type: "function",
            function: {
              name: tool.name,
              ...(tool.description !== undefined ? { description: tool.description } : {}),
              parameters: tool.parameters,
            },
          })),
          tool_choice: choice.type === "tool" ? { type: "function", function: { name: choice.name } } : choice.type,
        }
      : {}),
    max_tokens: request.maxTokens ?? setting.defaultMaxTokens,
    stream: false,
  };
}

/** Reads the wire answer as one assistant turn; every ambiguity is a refusal, never a guess. */
function readOpenAiChatAnswer(setting: TOpenAiSetting, request: TChatRequest, json: unknown): TChatOutput {
  const parsed = ZOpenAiChatResponseSchema.safeParse(json);
  if (!parsed.success) throw upstreamFailure("openai", "malformed_response");
  const choice = parsed.data.choices[0]!;
  const toolCalls: TChatToolCall[] = [];
  for (const call of choice.message.tool_calls ?? []) {
    // We offer only function tools: any other kind of call names a tool that was not offered.
    if ((call.type !== undefined && call.type !== "function") || call.function === undefined)
      throw upstreamMalformedToolCall("openai", "a tool call is not a function call");
    toolCalls.push({ id: call.id, name: call.function.name, arguments: call.function.arguments });
  }
  const malformed = findMalformedToolCall(toolCalls, request.tools);
  if (malformed !== null) throw upstreamMalformedToolCall("openai", malformed);
  let finishReason = choice.finish_reason == null ? undefined : OPENAI_FINISH_REASONS[choice.finish_reason];
  if (finishReason === undefined) throw upstreamFailure("openai", "malformed_response");
  const content = choice.message.content ?? null;
  if (content === null && toolCalls.length === 0) throw upstreamFailure("openai", "malformed_response");
  // "tool_calls" with no call is a contradiction; tool calls ended by "stop" are what some compatible servers send.
  if (finishReason === "tool_calls" && toolCalls.length === 0) throw upstreamFailure("openai", "malformed_response");
  if (finishReason === "stop" && toolCalls.length > 0) finishReason = "tool_calls";
  return {
    message: { role: "assistant", content, toolCalls },
    finishReason,
    model: setting.model,
    inputTokens: parsed.data.usage?.prompt_tokens,
    outputTokens: parsed.data.usage?.completion_tokens,
  };
}

/** `dataDir`: whose DATA_DIR/credentials/ the credential file must be in. */
export function createOpenAiTransport(setting: TOpenAiSetting, { dataDir }: { dataDir: string }): TRelayTransport {
  async function post(body: unknown, signal: AbortSignal | undefined): Promise<unknown> {
    const credential = await readCredentialFile("openai", setting.credentialFile, dataDir);
    return postJson({
      kind: "openai",
      endpoint: setting.endpoint,
      headers: { authorization: `Bearer ${credential}` },
      body,
      connectTimeoutMs: setting.connectTimeoutMs,
      requestTimeoutMs: setting.requestTimeoutMs,
      maxResponseBytes: setting.maxResponseBytes,
      signal,
    });
  }
  return {
    kind: "openai",
    async complete({ messages, maxTokens, signal }) {
      const json = await post(
        {
          model: setting.model,
          messages: messages.map((m) => ({ role: m.role, content: m.content })),
          max_tokens: maxTokens ?? setting.defaultMaxTokens,
          stream: false,
        },
        signal,
      );
      const parsed = ZOpenAiResponseSchema.safeParse(json);
      if (!parsed.success) throw upstreamFailure("openai", "malformed_response");
      return {
        content: parsed.data.choices[0]!.message.content,
        inputTokens: parsed.data.usage?.prompt_tokens,
        outputTokens: parsed.data.usage?.completion_tokens,
      };
    },
    async chat({ request, signal }) {
      const json = await post(buildOpenAiChatBody(setting, request), signal);
      return readOpenAiChatAnswer(setting, request, json);
    },
  };
}
