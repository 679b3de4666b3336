// @ts-check
// The OpenAI Chat Completions format of the in-guest model endpoint (guest/model-endpoint.mjs):
// a request → the relay's provider-neutral chat request (lib/relay/chat-request.ts), the relay's
// answer → a chat.completion object or its server-sent events, and the error type of a failure.
// Pure translation, no I/O. Runs INSIDE the student guest (Node 24, no dependencies).
import {
  checkFields,
  checkKeys,
  invalid,
  isObject,
  MAX_TOKENS_CEILING,
  newId,
  nowSeconds,
  readMaxTokens,
  requireString,
  splitText,
} from "./model-endpoint-common.mjs";

/** @import { ChatAnswer, ChatMessage, ChatTool, ChatToolCall, ChatToolChoice, ChatRequest, RelayUsage } from "./relay-client.mjs" */
/** @import { FieldRule } from "./model-endpoint-common.mjs" */

// ---- what is done with each request field ------------------------------------------------------

/**
 * What the OpenAI format does with each request field (FieldRule in model-endpoint-common.mjs).
 * @type {Record<string, FieldRule>}
 */
export const OPENAI_REQUEST_FIELDS = {
  model: { kind: "ignored", note: "any name; the operator-pinned model answers and the response's model names it" },
  messages: { kind: "used", note: "system/developer, user, assistant (tool_calls), tool; text content only" },
  tools: { kind: "used", note: 'type "function" only (name, description, parameters; strict is ignored)' },
  tool_choice: { kind: "used", note: '"auto", "none", "required" or {type:"function",function:{name}}' },
  max_completion_tokens: { kind: "used", note: `above ${MAX_TOKENS_CEILING} it is lowered to ${MAX_TOKENS_CEILING}` },
  max_tokens: { kind: "used", note: "as max_completion_tokens (which wins when both are set)" },
  stream: { kind: "used", note: "server-sent events synthesized from the relay's complete answer" },
  stream_options: { kind: "used", note: "include_usage is honoured; include_obfuscation is ignored" },
  temperature: { kind: "ignored", note: "sampling hint" },
  top_p: { kind: "ignored", note: "sampling hint" },
  frequency_penalty: { kind: "ignored", note: "sampling hint" },
  presence_penalty: { kind: "ignored", note: "sampling hint" },
  seed: { kind: "ignored", note: "sampling hint" },
  reasoning_effort: { kind: "ignored", note: "hint to reasoning models" },
  verbosity: { kind: "ignored", note: "hint" },
  user: { kind: "ignored", note: "bookkeeping" },
  safety_identifier: { kind: "ignored", note: "bookkeeping" },
  metadata: { kind: "ignored", note: "bookkeeping" },
  store: { kind: "ignored", note: "bookkeeping; nothing is stored" },
  prompt_cache_key: { kind: "ignored", note: "caching hint" },
  prompt_cache_retention: { kind: "ignored", note: "caching hint" },
  service_tier: { kind: "ignored", note: "bookkeeping" },
  n: { kind: "only", note: "1", allows: (value) => value === 1 },
  parallel_tool_calls: {
    kind: "only",
    note: "true (the relay cannot forbid parallel calls)",
    allows: (value) => value === true,
  },
  logprobs: { kind: "only", note: "false", allows: (value) => value === false },
  response_format: { kind: "only", note: '{type:"text"}', allows: (value) => isObject(value) && value.type === "text" },
  modalities: {
    kind: "only",
    note: '["text"]',
    allows: (value) => Array.isArray(value) && value.length === 1 && value[0] === "text",
  },
  stop: { kind: "only", note: "none (an empty list)", allows: (value) => Array.isArray(value) && value.length === 0 },
  top_logprobs: { kind: "refused", note: "log probabilities are not carried" },
  logit_bias: { kind: "refused", note: "not carried" },
  audio: { kind: "refused", note: "text only" },
  prediction: { kind: "refused", note: "not carried" },
  web_search_options: { kind: "refused", note: "no web search" },
  functions: { kind: "refused", note: "legacy; use tools" },
  function_call: { kind: "refused", note: "legacy; use tool_choice" },
};

// ---- OpenAI: request ----------------------------------------------------------------------------

/**
 * Text of an OpenAI content value: a string or an array of text parts (refusal parts count as text
 * in assistant history). Any other part — image_url, input_audio, file — is refused.
 * @param {unknown} content
 * @param {string} where
 * @param {string[]} partTypes
 */
function openAiText(content, where, partTypes = ["text"]) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw invalid(`${where}: must be a string or an array of text parts`, where);
  return content
    .map((part, index) => {
      const at = `${where}[${index}]`;
      if (!isObject(part) || !partTypes.includes(part.type))
        throw invalid(
          `${at}.type: ${JSON.stringify(isObject(part) ? part.type : part)?.slice(0, 40)} content parts are not supported: the relay carries text only`,
          `${at}.type`,
        );
      checkKeys(part, ["type", "text", "refusal"], at);
      return requireString(
        part.type === "refusal" ? part.refusal : part.text,
        `${at}.${part.type === "refusal" ? "refusal" : "text"}`,
      );
    })
    .join("\n");
}

/**
 * @param {unknown} message
 * @param {number} index
 * @returns {ChatMessage}
 */
function openAiMessageToChat(message, index) {
  const where = `messages[${index}]`;
  if (!isObject(message)) throw invalid(`${where}: must be an object`, where);
  switch (message.role) {
    case "system":
    case "developer":
      checkKeys(message, ["role", "content", "name"], where);
      return { role: "system", content: openAiText(message.content, `${where}.content`) };
    case "user":
      checkKeys(message, ["role", "content", "name"], where);
      return { role: "user", content: openAiText(message.content, `${where}.content`) };
    case "assistant": {
      // What the SDK returned is often appended as is: refusal, annotations, audio/function_call null.
      checkKeys(message, ["role", "content", "name", "tool_calls", "refusal", "annotations"], where);
      const content =
        message.content === null || message.content === undefined
          ? null
          : openAiText(message.content, `${where}.content`, ["text", "refusal"]);
      const calls = message.tool_calls ?? [];
      if (!Array.isArray(calls)) throw invalid(`${where}.tool_calls: must be an array`, `${where}.tool_calls`);
      const toolCalls = calls.map((call, callIndex) => {
        const at = `${where}.tool_calls[${callIndex}]`;
        if (!isObject(call) || call.type !== "function" || !isObject(call.function))
          throw invalid(`${at}: only function tool calls are supported`, at);
        checkKeys(call, ["id", "type", "function"], at);
        return {
          id: requireString(call.id, `${at}.id`),
          name: requireString(call.function.name, `${at}.function.name`),
          arguments: requireString(call.function.arguments, `${at}.function.arguments`),
        };
      });
      return { role: "assistant", content, toolCalls };
    }
    case "tool":
      checkKeys(message, ["role", "content", "tool_call_id"], where);
      return {
        role: "tool",
        toolCallId: requireString(message.tool_call_id, `${where}.tool_call_id`),
        content: openAiText(message.content, `${where}.content`),
      };
    default:
      throw invalid(
        `${where}.role: ${JSON.stringify(message.role)?.slice(0, 40)} is not supported (system, developer, user, assistant, tool)`,
        `${where}.role`,
      );
  }
}

/** @param {unknown} choice @returns {ChatToolChoice} */
function openAiToolChoiceToChat(choice) {
  if (choice === "auto" || choice === "none" || choice === "required") return { type: choice };
  if (isObject(choice) && choice.type === "function" && isObject(choice.function)) {
    return { type: "tool", name: requireString(choice.function.name, "tool_choice.function.name") };
  }
  throw invalid(
    'tool_choice: only "auto", "none", "required" or {type:"function",function:{name}} is supported',
    "tool_choice",
  );
}

/**
 * An OpenAI Chat Completions request → the relay's chat request, plus how to answer it.
 * Throws EndpointRequestError (400) naming the first field it cannot carry.
 * @param {unknown} body
 * @returns {{ chat: ChatRequest, stream: boolean, includeUsage: boolean }}
 */
export function openAiRequestToChat(body) {
  if (!isObject(body)) throw invalid("the request body must be a JSON object");
  checkFields(body, OPENAI_REQUEST_FIELDS);
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    throw invalid("messages: must be a non-empty array", "messages");
  const rawTools = body.tools ?? [];
  if (!Array.isArray(rawTools)) throw invalid("tools: must be an array", "tools");
  const tools = rawTools.map((tool, index) => {
    const at = `tools[${index}]`;
    if (!isObject(tool) || tool.type !== "function" || !isObject(tool.function))
      throw invalid(`${at}.type: only function tools are supported`, `${at}.type`);
    checkKeys(tool, ["type", "function"], at);
    checkKeys(tool.function, ["name", "description", "parameters", "strict"], `${at}.function`);
    /** @type {ChatTool} */
    const translated = { name: requireString(tool.function.name, `${at}.function.name`) };
    if (tool.function.description !== undefined && tool.function.description !== null)
      translated.description = requireString(tool.function.description, `${at}.function.description`);
    if (tool.function.parameters !== undefined && tool.function.parameters !== null) {
      if (!isObject(tool.function.parameters))
        throw invalid(`${at}.function.parameters: must be a JSON Schema object`, `${at}.function.parameters`);
      translated.parameters = tool.function.parameters;
    }
    return translated;
  });
  /** @type {ChatRequest} */
  const chat = {
    messages: body.messages.map(openAiMessageToChat),
    tools,
    toolChoice:
      body.tool_choice === undefined || body.tool_choice === null
        ? { type: "auto" }
        : openAiToolChoiceToChat(body.tool_choice),
  };
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (maxTokens !== undefined && maxTokens !== null)
    chat.maxTokens = readMaxTokens(
      maxTokens,
      body.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens",
    );
  if (body.stream_options != null) {
    if (!isObject(body.stream_options)) throw invalid("stream_options: must be an object", "stream_options");
    checkKeys(body.stream_options, ["include_usage", "include_obfuscation"], "stream_options");
  }
  return { chat, stream: body.stream === true, includeUsage: body.stream_options?.include_usage === true };
}

// ---- OpenAI: response ---------------------------------------------------------------------------

const OPENAI_FINISH_REASONS = { stop: "stop", length: "length", tool_calls: "tool_calls" };

/** @param {RelayUsage} usage */
function openAiUsage(usage) {
  const prompt = usage?.inputTokens ?? 0;
  const completion = usage?.outputTokens ?? 0;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

/** @param {ChatToolCall} call */
function openAiToolCall(call) {
  return { id: call.id, type: "function", function: { name: call.name, arguments: call.arguments } };
}

/**
 * The relay's chat answer → an OpenAI chat.completion object.
 * @param {ChatAnswer} answer
 * @param {RelayUsage} usage
 * @param {{ id?: string, created?: number }} [options]
 */
export function chatToOpenAiResponse(answer, usage, { id = newId("chatcmpl-"), created = nowSeconds() } = {}) {
  const { content, toolCalls } = answer.message;
  return {
    id,
    object: "chat.completion",
    created,
    model: answer.model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content,
          refusal: null,
          annotations: [],
          ...(toolCalls.length > 0 ? { tool_calls: toolCalls.map(openAiToolCall) } : {}),
        },
        logprobs: null,
        finish_reason: OPENAI_FINISH_REASONS[answer.finishReason],
      },
    ],
    usage: openAiUsage(usage),
    system_fingerprint: null,
  };
}

/**
 * The server-sent events of a streamed chat completion, in OpenAI's order: the role, content
 * deltas, per tool call its identity then its arguments, the finish reason, the usage chunk (when
 * asked for), `[DONE]`.
 * @param {ChatAnswer} answer
 * @param {RelayUsage} usage
 * @param {{ id?: string, created?: number, includeUsage?: boolean }} [options]
 * @returns {Generator<string>}
 */
export function* openAiStreamEvents(
  answer,
  usage,
  { id = newId("chatcmpl-"), created = nowSeconds(), includeUsage = false } = {},
) {
  const { content, toolCalls } = answer.message;
  /** @param {unknown[]} choices @param {unknown} [chunkUsage] */
  const chunk = (choices, chunkUsage = null) =>
    `data: ${JSON.stringify({
      id,
      object: "chat.completion.chunk",
      created,
      model: answer.model,
      system_fingerprint: null,
      choices,
      ...(includeUsage ? { usage: chunkUsage } : {}),
    })}\n\n`;
  /** @param {Record<string, unknown>} delta @param {string | null} [finishReason] */
  const choice = (delta, finishReason = null) => [{ index: 0, delta, logprobs: null, finish_reason: finishReason }];
  yield chunk(choice({ role: "assistant", content: content === null ? null : "", refusal: null }));
  for (const part of splitText(content ?? "")) yield chunk(choice({ content: part }));
  for (const [index, call] of toolCalls.entries()) {
    yield chunk(
      choice({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }),
    );
    for (const part of splitText(call.arguments))
      yield chunk(choice({ tool_calls: [{ index, function: { arguments: part } }] }));
  }
  yield chunk(choice({}, OPENAI_FINISH_REASONS[answer.finishReason]));
  if (includeUsage) yield chunk([], openAiUsage(usage));
  yield "data: [DONE]\n\n";
}

// ---- errors on the wire -------------------------------------------------------------------------

const BUDGET_CODES = ["RELAY_QUOTA_EXHAUSTED", "RELAY_TOKENS_EXHAUSTED", "RELAY_CLIENT_EXHAUSTED"];

/**
 * @param {number} status
 * @param {string | null} code
 */
export function openAiErrorType(status, code) {
  if (code && BUDGET_CODES.includes(code)) return "insufficient_quota";
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}
