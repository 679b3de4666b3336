// @ts-check
// The in-guest model endpoint (issue 25). Runs INSIDE the student guest (Node 24, no dependencies),
// started by the runner before the agent. Students write agents with the official OpenAI or
// Anthropic SDKs; the guest has no network and no upstream credential, so this server speaks both
// providers' HTTP formats on loopback and turns each call into ONE relay `chat` call (the
// provider-neutral contract of lib/relay/chat-request.ts) through the task's relay client.
//
//   POST /v1/chat/completions   OpenAI Chat Completions (non-streaming and `stream: true`)
//   POST /v1/messages           Anthropic Messages (non-streaming and `stream: true`)
//   GET  /v1/models[/{id}]      the operator-pinned model, in a shape both SDKs' models.list accept
//
// Why these choices:
// - Whatever model the agent names, the operator-pinned model answers; the response says which.
// - Every request field is either translated, accepted without effect, or refused with a 400 that
//   names it (OPENAI_REQUEST_FIELDS / ANTHROPIC_REQUEST_FIELDS below). A field the relay cannot carry
//   is never dropped silently: an agent that asked for n=2 or an image must learn it did not get it.
// - The relay call is not streamed. A streaming request waits for the relay's complete answer and
//   only then sends the status line, so a refusal is an HTTP error the SDK raises as such (not an
//   error event mid-stream); the events are synthesized from the answer, content split into a few
//   deltas, exactly in the providers' event order.
// - Relay refusals (budget spent, capability revoked, upstream failed) carry `x-should-retry: false`,
//   which both SDKs obey: retrying cannot succeed and would only spend the agent's time.
// - Hostile or broken agents share the guest with it: the body is capped (the relay's request
//   ceiling plus envelope), concurrent requests are capped, receiving a request is timed, a relay
//   call is timed, and a client that disconnects at any point only loses its own answer.
import crypto from "node:crypto";
import fs from "node:fs";
import http from "node:http";

// The guest layout: lib/contract/guest-layout.ts (its test keeps these equal).
export const MODEL_ENDPOINT_PORT = 7800;
export const LOG_FILE = "/tmp/school-core-output/model-endpoint.log";

/** Loopback only: the agent is the one client; nothing else in or outside the guest may call it. */
export const LOOPBACK_HOSTS = ["127.0.0.1", "::1"];
/** lib/relay/limits.ts RELAY_MAX_HTTP_BODY_BYTES (a test keeps them equal). */
export const MAX_BODY_BYTES = 16 * 1024 * 1024 + 4096;
/** lib/relay/limits.ts RELAY_MAX_TOKENS_CEILING: a larger max_tokens is lowered to it. */
export const MAX_TOKENS_CEILING = 32_768;
export const MAX_CONCURRENT_REQUESTS = 16;
/** Receiving one whole request (headers and body) from the agent. */
export const REQUEST_RECEIVE_TIMEOUT_MS = 60_000;
/** One relay call; the relay client's own deadline (10 min) normally fires first. */
export const RELAY_CALL_TIMEOUT_MS = 11 * 60 * 1000;
export const MAX_LOG_BYTES = 256 * 1024;
/** The model name when task.json pins none (the scripted demo transport). */
export const DEFAULT_MODEL_ID = "school-core-relay";
/** How many deltas a streamed text or tool-argument string is split into (at most). */
export const STREAM_DELTA_PARTS = 4;

const MAX_LOG_LINE_CHARS = 600;

/**
 * @typedef {{ id: string, name: string, arguments: string }} ChatToolCall
 * @typedef {{ role: "system" | "user", content: string }
 *   | { role: "assistant", content: string | null, toolCalls: ChatToolCall[] }
 *   | { role: "tool", toolCallId: string, content: string }} ChatMessage
 * @typedef {{ name: string, description?: string, parameters?: Record<string, unknown> }} ChatTool
 * @typedef {{ type: "auto" | "none" | "required" } | { type: "tool", name: string }} ChatToolChoice
 * @typedef {{ messages: ChatMessage[], tools: ChatTool[], toolChoice: ChatToolChoice, maxTokens?: number }} ChatRequest
 * @typedef {{ message: { role: "assistant", content: string | null, toolCalls: ChatToolCall[] },
 *   finishReason: "stop" | "length" | "tool_calls", model: string }} ChatAnswer
 * @typedef {{ inputTokens?: number, outputTokens?: number } | null} RelayUsage
 * @typedef {{ chat(request: ChatRequest): Promise<{ chat: ChatAnswer, usage: RelayUsage }> }} ChatClient
 */

// ---- what is done with each request field ------------------------------------------------------

/**
 * One table per format, reproduced in the README. `used`: translated into the relay's chat request.
 * `ignored`: accepted and without effect — sampling hints and bookkeeping the relay does not carry,
 * which change neither the answer's shape nor its contract. `only`: accepted with the value named,
 * refused otherwise. `refused`: a 400 naming the field. `null` is accepted for every field (it means
 * the provider's default). A field in no table is refused.
 * @typedef {{ kind: "used" | "ignored" | "refused", note: string } | { kind: "only", note: string, allows: (value: unknown) => boolean }} FieldRule
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
  parallel_tool_calls: { kind: "only", note: "true (the relay cannot forbid parallel calls)", allows: (value) => value === true },
  logprobs: { kind: "only", note: "false", allows: (value) => value === false },
  response_format: { kind: "only", note: '{type:"text"}', allows: (value) => isObject(value) && value.type === "text" },
  modalities: { kind: "only", note: '["text"]', allows: (value) => Array.isArray(value) && value.length === 1 && value[0] === "text" },
  stop: { kind: "only", note: "none (an empty list)", allows: (value) => Array.isArray(value) && value.length === 0 },
  top_logprobs: { kind: "refused", note: "log probabilities are not carried" },
  logit_bias: { kind: "refused", note: "not carried" },
  audio: { kind: "refused", note: "text only" },
  prediction: { kind: "refused", note: "not carried" },
  web_search_options: { kind: "refused", note: "no web search" },
  functions: { kind: "refused", note: "legacy; use tools" },
  function_call: { kind: "refused", note: "legacy; use tool_choice" },
};

/** @type {Record<string, FieldRule>} */
export const ANTHROPIC_REQUEST_FIELDS = {
  model: { kind: "ignored", note: "any name; the operator-pinned model answers and the response's model names it" },
  messages: { kind: "used", note: "text, tool_use and tool_result blocks (tool_result content: string or text blocks)" },
  system: { kind: "used", note: "a string or text blocks" },
  max_tokens: { kind: "used", note: `required; above ${MAX_TOKENS_CEILING} it is lowered to ${MAX_TOKENS_CEILING}` },
  tools: { kind: "used", note: "custom tools only (name, description, input_schema); server tools are refused" },
  tool_choice: { kind: "used", note: "auto, any, tool, none; disable_parallel_tool_use: true is refused" },
  stream: { kind: "used", note: "server-sent events synthesized from the relay's complete answer" },
  temperature: { kind: "ignored", note: "sampling hint" },
  top_p: { kind: "ignored", note: "sampling hint" },
  top_k: { kind: "ignored", note: "sampling hint" },
  metadata: { kind: "ignored", note: "bookkeeping" },
  service_tier: { kind: "ignored", note: "bookkeeping" },
  cache_control: { kind: "ignored", note: "caching hint (also on blocks and tools)" },
  thinking: { kind: "only", note: '{type:"disabled"}', allows: (value) => isObject(value) && value.type === "disabled" },
  stop_sequences: { kind: "only", note: "none (an empty list)", allows: (value) => Array.isArray(value) && value.length === 0 },
  output_config: { kind: "refused", note: "not carried" },
  output_format: { kind: "refused", note: "structured output is not carried" },
  mcp_servers: { kind: "refused", note: "no MCP servers" },
  container: { kind: "refused", note: "no containers" },
  context_management: { kind: "refused", note: "not carried" },
  inference_geo: { kind: "refused", note: "not carried" },
};

// ---- errors -------------------------------------------------------------------------------------

/** A request the endpoint refuses before the relay: status, a message naming the field, its path. */
export class EndpointRequestError extends Error {
  /**
   * @param {number} status
   * @param {string} message
   * @param {string | null} [param]
   */
  constructor(status, message, param = null) {
    super(message);
    this.name = "EndpointRequestError";
    this.status = status;
    this.param = param;
  }
}

/** @param {string} message @param {string | null} [param] */
function invalid(message, param = null) {
  return new EndpointRequestError(400, message, param);
}

/** @param {unknown} value @returns {value is Record<string, any>} */
function isObject(value) {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * Refuses fields the table refuses or does not know, and `only` fields with another value.
 * @param {Record<string, unknown>} body
 * @param {Record<string, FieldRule>} table
 */
function checkFields(body, table) {
  for (const [name, value] of Object.entries(body)) {
    const rule = Object.hasOwn(table, name) ? table[name] : undefined;
    if (!rule) throw invalid(`${name}: this field is not supported by the school-core model endpoint`, name);
    if (value === null || value === undefined) continue;
    if (rule.kind === "refused") throw invalid(`${name}: not supported by the school-core model endpoint (${rule.note})`, name);
    if (rule.kind === "only" && !rule.allows(value))
      throw invalid(`${name}: only ${rule.note} is supported by the school-core model endpoint`, name);
  }
}

/**
 * Refuses keys outside `allowed` in a nested object (a message, a block, a tool).
 * @param {Record<string, unknown>} value
 * @param {string[]} allowed
 * @param {string} where
 */
function checkKeys(value, allowed, where) {
  for (const key of Object.keys(value)) {
    if (!allowed.includes(key) && value[key] !== null && value[key] !== undefined)
      throw invalid(`${where}.${key}: not supported by the school-core model endpoint`, `${where}.${key}`);
  }
}

/** @param {unknown} value @param {string} where */
function requireString(value, where) {
  if (typeof value !== "string") throw invalid(`${where}: must be a string`, where);
  return value;
}

/** @param {unknown} value @param {string} where */
function readMaxTokens(value, where) {
  if (!Number.isInteger(value) || /** @type {number} */ (value) < 1) throw invalid(`${where}: must be a positive integer`, where);
  return Math.min(/** @type {number} */ (value), MAX_TOKENS_CEILING);
}

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
      return requireString(part.type === "refusal" ? part.refusal : part.text, `${at}.${part.type === "refusal" ? "refusal" : "text"}`);
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
  throw invalid('tool_choice: only "auto", "none", "required" or {type:"function",function:{name}} is supported', "tool_choice");
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
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw invalid("messages: must be a non-empty array", "messages");
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
    toolChoice: body.tool_choice === undefined || body.tool_choice === null ? { type: "auto" } : openAiToolChoiceToChat(body.tool_choice),
  };
  const maxTokens = body.max_completion_tokens ?? body.max_tokens;
  if (maxTokens !== undefined && maxTokens !== null)
    chat.maxTokens = readMaxTokens(maxTokens, body.max_completion_tokens != null ? "max_completion_tokens" : "max_tokens");
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
export function* openAiStreamEvents(answer, usage, { id = newId("chatcmpl-"), created = nowSeconds(), includeUsage = false } = {}) {
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
    yield chunk(choice({ tool_calls: [{ index, id: call.id, type: "function", function: { name: call.name, arguments: "" } }] }));
    for (const part of splitText(call.arguments)) yield chunk(choice({ tool_calls: [{ index, function: { arguments: part } }] }));
  }
  yield chunk(choice({}, OPENAI_FINISH_REASONS[answer.finishReason]));
  if (includeUsage) yield chunk([], openAiUsage(usage));
  yield "data: [DONE]\n\n";
}

// ---- Anthropic: request -------------------------------------------------------------------------

/**
 * Text of Anthropic text blocks (system, tool_result content). Other block types are refused.
 * @param {unknown} content
 * @param {string} where
 */
function anthropicText(content, where) {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) throw invalid(`${where}: must be a string or an array of text blocks`, where);
  return content
    .map((block, index) => {
      const at = `${where}[${index}]`;
      if (!isObject(block) || block.type !== "text") throw unsupportedBlock(block, at);
      checkTextBlock(block, at);
      return requireString(block.text, `${at}.text`);
    })
    .join("\n");
}

/** @param {unknown} block @param {string} at */
function unsupportedBlock(block, at) {
  const type = isObject(block) ? JSON.stringify(block.type)?.slice(0, 40) : "non-object";
  return invalid(`${at}.type: ${type} blocks are not supported here: the relay carries text, tool_use and tool_result only`, `${at}.type`);
}

/** @param {Record<string, unknown>} block @param {string} at */
function checkTextBlock(block, at) {
  checkKeys(block, ["type", "text", "cache_control", "citations"], at);
  if (Array.isArray(block.citations) && block.citations.length > 0) throw invalid(`${at}.citations: not supported`, `${at}.citations`);
}

/**
 * One Anthropic message → one or more relay messages: a user turn's tool_result blocks become tool
 * messages (in order, before the turn's text), an assistant turn's tool_use blocks its tool calls.
 * @param {unknown} message
 * @param {number} index
 * @returns {ChatMessage[]}
 */
function anthropicMessageToChat(message, index) {
  const where = `messages[${index}]`;
  if (!isObject(message)) throw invalid(`${where}: must be an object`, where);
  checkKeys(message, ["role", "content"], where);
  if (message.role !== "user" && message.role !== "assistant")
    throw invalid(`${where}.role: must be "user" or "assistant"`, `${where}.role`);
  const blocks = typeof message.content === "string" ? [{ type: "text", text: message.content }] : message.content;
  if (!Array.isArray(blocks)) throw invalid(`${where}.content: must be a string or an array of blocks`, `${where}.content`);
  /** @type {string[]} */
  const texts = [];
  /** @type {ChatMessage[]} */
  const toolMessages = [];
  /** @type {ChatToolCall[]} */
  const toolCalls = [];
  for (const [blockIndex, block] of blocks.entries()) {
    const at = `${where}.content[${blockIndex}]`;
    if (isObject(block) && block.type === "text") {
      checkTextBlock(block, at);
      texts.push(requireString(block.text, `${at}.text`));
    } else if (isObject(block) && block.type === "tool_use" && message.role === "assistant") {
      checkKeys(block, ["type", "id", "name", "input", "cache_control", "caller"], at);
      if (!isObject(block.input)) throw invalid(`${at}.input: must be an object`, `${at}.input`);
      toolCalls.push({
        id: requireString(block.id, `${at}.id`),
        name: requireString(block.name, `${at}.name`),
        arguments: JSON.stringify(block.input),
      });
    } else if (isObject(block) && block.type === "tool_result" && message.role === "user") {
      checkKeys(block, ["type", "tool_use_id", "content", "is_error", "cache_control"], at);
      const text = block.content === undefined || block.content === null ? "" : anthropicText(block.content, `${at}.content`);
      // The relay's tool message has no error flag; the model still has to learn the call failed.
      toolMessages.push({
        role: "tool",
        toolCallId: requireString(block.tool_use_id, `${at}.tool_use_id`),
        content: block.is_error === true ? `Error: ${text}` : text,
      });
    } else {
      throw unsupportedBlock(block, at);
    }
  }
  if (message.role === "assistant") return [{ role: "assistant", content: texts.length > 0 ? texts.join("\n") : null, toolCalls }];
  return [
    ...toolMessages,
    ...(texts.length > 0 || toolMessages.length === 0 ? [{ role: /** @type {const} */ ("user"), content: texts.join("\n") }] : []),
  ];
}

/** @param {unknown} choice @param {number} toolCount @returns {ChatToolChoice} */
function anthropicToolChoiceToChat(choice, toolCount) {
  if (!isObject(choice)) throw invalid("tool_choice: must be an object", "tool_choice");
  checkKeys(choice, ["type", "name", "disable_parallel_tool_use"], "tool_choice");
  if (choice.disable_parallel_tool_use === true)
    throw invalid(
      "tool_choice.disable_parallel_tool_use: true is not supported (the relay cannot forbid parallel calls)",
      "tool_choice.disable_parallel_tool_use",
    );
  switch (choice.type) {
    case "auto":
    case "none":
      return { type: choice.type };
    case "any":
      return toolCount > 0 ? { type: "required" } : { type: "auto" };
    case "tool":
      return { type: "tool", name: requireString(choice.name, "tool_choice.name") };
    default:
      throw invalid("tool_choice.type: must be auto, any, tool or none", "tool_choice.type");
  }
}

/**
 * An Anthropic Messages request → the relay's chat request, plus how to answer it.
 * Throws EndpointRequestError (400) naming the first field it cannot carry.
 * @param {unknown} body
 * @returns {{ chat: ChatRequest, stream: boolean }}
 */
export function anthropicRequestToChat(body) {
  if (!isObject(body)) throw invalid("the request body must be a JSON object");
  checkFields(body, ANTHROPIC_REQUEST_FIELDS);
  if (body.max_tokens === undefined || body.max_tokens === null) throw invalid("max_tokens: Field required", "max_tokens");
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw invalid("messages: must be a non-empty array", "messages");
  const rawTools = body.tools ?? [];
  if (!Array.isArray(rawTools)) throw invalid("tools: must be an array", "tools");
  const tools = rawTools.map((tool, index) => {
    const at = `tools[${index}]`;
    if (!isObject(tool) || (tool.type !== undefined && tool.type !== null && tool.type !== "custom"))
      throw invalid(`${at}.type: only custom tools are supported (no server tools)`, `${at}.type`);
    checkKeys(tool, ["type", "name", "description", "input_schema", "cache_control", "strict"], at);
    if (!isObject(tool.input_schema)) throw invalid(`${at}.input_schema: must be a JSON Schema object`, `${at}.input_schema`);
    /** @type {ChatTool} */
    const translated = { name: requireString(tool.name, `${at}.name`), parameters: tool.input_schema };
    if (tool.description !== undefined && tool.description !== null)
      translated.description = requireString(tool.description, `${at}.description`);
    return translated;
  });
  /** @type {ChatMessage[]} */
  const messages = [];
  if (body.system !== undefined && body.system !== null) {
    const system = anthropicText(body.system, "system");
    if (system !== "") messages.push({ role: "system", content: system });
  }
  for (const [index, message] of body.messages.entries()) messages.push(...anthropicMessageToChat(message, index));
  return {
    chat: {
      messages,
      tools,
      toolChoice:
        body.tool_choice === undefined || body.tool_choice === null
          ? { type: "auto" }
          : anthropicToolChoiceToChat(body.tool_choice, tools.length),
      maxTokens: readMaxTokens(body.max_tokens, "max_tokens"),
    },
    stream: body.stream === true,
  };
}

// ---- Anthropic: response ------------------------------------------------------------------------

const ANTHROPIC_STOP_REASONS = { stop: "end_turn", length: "max_tokens", tool_calls: "tool_use" };

/** @param {RelayUsage} usage */
function anthropicUsage(usage) {
  return {
    input_tokens: usage?.inputTokens ?? 0,
    output_tokens: usage?.outputTokens ?? 0,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: 0,
  };
}

/**
 * The relay's tool-call arguments as an input object. The relay checked them; anything else is a
 * broken answer, refused rather than passed on as `{}`.
 * @param {ChatToolCall} call
 */
function toolInput(call) {
  let input;
  try {
    input = JSON.parse(call.arguments);
  } catch {
    input = undefined;
  }
  if (!isObject(input)) throw new EndpointRequestError(502, "the relay's tool call arguments are not a JSON object");
  return input;
}

/** @param {ChatAnswer} answer */
function anthropicBlocks(answer) {
  const { content, toolCalls } = answer.message;
  return [
    ...(content ? [{ type: /** @type {const} */ ("text"), text: content, citations: null }] : []),
    ...toolCalls.map((call) => ({ type: /** @type {const} */ ("tool_use"), id: call.id, name: call.name, input: toolInput(call) })),
  ];
}

/**
 * The relay's chat answer → an Anthropic message object.
 * @param {ChatAnswer} answer
 * @param {RelayUsage} usage
 * @param {{ id?: string }} [options]
 */
export function chatToAnthropicMessage(answer, usage, { id = newId("msg_") } = {}) {
  return {
    id,
    type: "message",
    role: "assistant",
    model: answer.model,
    content: anthropicBlocks(answer),
    stop_reason: ANTHROPIC_STOP_REASONS[answer.finishReason],
    stop_sequence: null,
    usage: anthropicUsage(usage),
  };
}

/**
 * The server-sent events of a streamed message, in Anthropic's order: message_start, a ping, per
 * block its start, deltas (text_delta / input_json_delta) and stop, message_delta with the stop
 * reason and usage, message_stop.
 * @param {ChatAnswer} answer
 * @param {RelayUsage} usage
 * @param {{ id?: string }} [options]
 * @returns {Generator<string>}
 */
export function* anthropicStreamEvents(answer, usage, { id = newId("msg_") } = {}) {
  /** @param {string} type @param {Record<string, unknown>} data */
  const event = (type, data) => `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  const blocks = anthropicBlocks(answer); // refuses broken tool arguments before the first event
  const totals = anthropicUsage(usage);
  yield event("message_start", {
    message: {
      id,
      type: "message",
      role: "assistant",
      model: answer.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { ...totals, output_tokens: 0 },
    },
  });
  yield event("ping", {});
  for (const [index, block] of blocks.entries()) {
    if (block.type === "text") {
      yield event("content_block_start", { index, content_block: { type: "text", text: "", citations: null } });
      for (const part of splitText(block.text)) yield event("content_block_delta", { index, delta: { type: "text_delta", text: part } });
    } else {
      yield event("content_block_start", { index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } });
      for (const part of splitText(JSON.stringify(block.input)))
        yield event("content_block_delta", { index, delta: { type: "input_json_delta", partial_json: part } });
    }
    yield event("content_block_stop", { index });
  }
  yield event("message_delta", {
    delta: { stop_reason: ANTHROPIC_STOP_REASONS[answer.finishReason], stop_sequence: null },
    usage: totals,
  });
  yield event("message_stop", {});
}

// ---- models -------------------------------------------------------------------------------------

/**
 * One model object both SDKs accept: OpenAI's (object, created, owned_by) and Anthropic's (type,
 * display_name, created_at) fields side by side.
 * @param {string} id
 * @param {number} created
 */
export function modelObject(id, created) {
  return {
    id,
    object: "model",
    created,
    owned_by: "school-core",
    type: "model",
    display_name: id,
    created_at: new Date(created * 1000).toISOString(),
  };
}

/**
 * The list both SDKs' models.list accept (OpenAI's `object: "list"`, Anthropic's pagination keys).
 * @param {string} id
 * @param {number} created
 */
export function modelList(id, created) {
  return { object: "list", data: [modelObject(id, created)], has_more: false, first_id: id, last_id: id };
}

// ---- errors on the wire -------------------------------------------------------------------------

/** A relay-client failure without an HTTP status of its own. */
const LOCAL_RELAY_ERROR_STATUS = {
  RELAY_CLIENT_TIMEOUT: 504,
  RELAY_CLIENT_IO: 502,
  RELAY_CLIENT_PROTOCOL: 502,
  RELAY_CLIENT_EXHAUSTED: 429,
  RELAY_CLIENT_CONFIG: 500,
};
const BUDGET_CODES = ["RELAY_QUOTA_EXHAUSTED", "RELAY_TOKENS_EXHAUSTED", "RELAY_CLIENT_EXHAUSTED"];

/**
 * @param {number} status
 * @param {string | null} code
 */
function openAiErrorType(status, code) {
  if (code && BUDGET_CODES.includes(code)) return "insufficient_quota";
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 429) return "rate_limit_error";
  if (status >= 500) return "server_error";
  return "invalid_request_error";
}

/** @param {number} status */
function anthropicErrorType(status) {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 504) return "timeout_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}

/**
 * An error body in the format's own shape.
 * @param {"openai" | "anthropic"} format
 * @param {number} status
 * @param {string} message
 * @param {{ code?: string | null, param?: string | null }} [details]
 */
export function errorBody(format, status, message, { code = null, param = null } = {}) {
  if (format === "anthropic") return { type: "error", error: { type: anthropicErrorType(status), message } };
  return { error: { message, type: openAiErrorType(status, code), param, code } };
}

// ---- the server ---------------------------------------------------------------------------------

/**
 * The environment the runner gives the agent so both SDKs reach this endpoint. The key is a
 * placeholder: the SDKs refuse to start without one, and the endpoint never checks it (the guest
 * holds no credential; the relay handle stays with the runner's client).
 * @param {number} [port]
 */
export function modelEndpointEnvironment(port = MODEL_ENDPOINT_PORT) {
  return {
    OPENAI_BASE_URL: `http://127.0.0.1:${port}/v1`,
    OPENAI_API_KEY: "placeholder",
    ANTHROPIC_BASE_URL: `http://127.0.0.1:${port}`,
    ANTHROPIC_API_KEY: "placeholder",
  };
}

/**
 * Starts the endpoint; resolves once it listens.
 * @param {{ client: ChatClient, port?: number, host?: string, model?: string | null, logFile?: string | null,
 *   maxConcurrentRequests?: number, relayCallTimeoutMs?: number }} options
 * @returns {Promise<{ port: number, host: string, close(): Promise<void> }>}
 */
export async function startModelEndpoint({
  client,
  port = MODEL_ENDPOINT_PORT,
  host = "127.0.0.1",
  model = null,
  logFile = LOG_FILE,
  maxConcurrentRequests = MAX_CONCURRENT_REQUESTS,
  relayCallTimeoutMs = RELAY_CALL_TIMEOUT_MS,
}) {
  if (!LOOPBACK_HOSTS.includes(host)) throw new Error(`the model endpoint listens on loopback only (${LOOPBACK_HOSTS.join(", ")})`);
  if (typeof client?.chat !== "function") throw new Error("the model endpoint needs a relay client with chat()");
  const modelId = typeof model === "string" && model.length > 0 ? model : DEFAULT_MODEL_ID;
  const created = nowSeconds();
  const log = createBoundedLog(logFile);
  let active = 0;

  const server = http.createServer((req, res) => {
    handleRequest(req, res).catch((error) => {
      log(`internal error: ${error instanceof Error ? error.message : String(error)}`);
      if (!res.headersSent && !res.destroyed) sendJson(res, 500, errorBody("openai", 500, "the model endpoint failed"));
      else res.destroy();
    });
  });
  server.requestTimeout = REQUEST_RECEIVE_TIMEOUT_MS;
  server.headersTimeout = Math.min(30_000, REQUEST_RECEIVE_TIMEOUT_MS);
  server.on("clientError", (_error, socket) => socket.destroy());

  /** @param {http.IncomingMessage} req @param {http.ServerResponse} res */
  async function handleRequest(req, res) {
    req.on("error", () => {}); // an aborted upload surfaces in readBody; never as an uncaught error
    res.on("error", () => {});
    const path = new URL(req.url ?? "/", "http://endpoint.invalid").pathname.replace(/\/+$/, "");
    /** @type {"openai" | "anthropic"} */
    const format = path.startsWith("/v1/messages") ? "anthropic" : "openai";
    /** @param {number} status @param {string} message @param {{ code?: string | null, param?: string | null, headers?: Record<string, string> }} [details] */
    const fail = (status, message, { code = null, param = null, headers = {} } = {}) => {
      log(`${req.method} ${path} → ${status}${code ? ` ${code}` : ""}: ${message}`);
      sendJson(res, status, errorBody(format, status, message, { code, param }), headers);
    };

    if (req.method === "GET" && path === "/v1/models") return sendJson(res, 200, modelList(modelId, created));
    if (req.method === "GET" && path.startsWith("/v1/models/")) {
      let id;
      try {
        id = decodeURIComponent(path.slice("/v1/models/".length));
      } catch {
        id = path.slice("/v1/models/".length); // a malformed escape names no model either
      }
      if (id === modelId) return sendJson(res, 200, modelObject(modelId, created));
      return fail(404, `model ${JSON.stringify(id.slice(0, 100))} does not exist; this endpoint serves ${modelId}`);
    }
    const isOpenAi = path === "/v1/chat/completions";
    if (!(isOpenAi || path === "/v1/messages"))
      return fail(404, `${req.method} ${path.slice(0, 100)} is not served by the school-core model endpoint`);
    if (req.method !== "POST") return fail(405, `${path} accepts POST only`);
    if (active >= maxConcurrentRequests) {
      return fail(429, `the model endpoint serves at most ${maxConcurrentRequests} requests at a time`, {
        headers: { "retry-after": "1" },
      });
    }
    active++;
    try {
      let body;
      try {
        body = JSON.parse((await readBody(req, MAX_BODY_BYTES)).toString("utf8"));
      } catch (error) {
        if (error instanceof EndpointRequestError) {
          res.setHeader("connection", "close");
          return fail(error.status, error.message);
        }
        if (req.destroyed || res.destroyed) return;
        return fail(400, "the request body is not valid JSON");
      }
      let translated;
      try {
        translated = isOpenAi ? openAiRequestToChat(body) : anthropicRequestToChat(body);
      } catch (error) {
        if (error instanceof EndpointRequestError)
          return fail(error.status, error.message, { code: "unsupported_parameter", param: error.param });
        throw error;
      }
      let answer;
      try {
        answer = await withTimeout(client.chat(translated.chat), relayCallTimeoutMs);
      } catch (error) {
        // A RelayClientError (or a timeout) normally; anything else is read defensively.
        const failure = /** @type {{ code?: unknown, status?: unknown, message?: unknown } | null | undefined} */ (error);
        const code = typeof failure?.code === "string" ? failure.code : "RELAY_CLIENT_PROTOCOL";
        const relayStatus =
          typeof failure?.status === "number" && Number.isInteger(failure.status) && failure.status >= 400 && failure.status <= 599
            ? failure.status
            : null;
        const status = relayStatus ?? LOCAL_RELAY_ERROR_STATUS[/** @type {keyof LOCAL_RELAY_ERROR_STATUS} */ (code)] ?? 502;
        const message = `${code}: ${typeof failure?.message === "string" ? failure.message.slice(0, 500) : "the relay call failed"}`;
        if (res.destroyed) return log(`${req.method} ${path}: the agent disconnected; the relay answered ${code}`);
        // Retrying a spent budget, a revoked capability or a failed upstream cannot succeed.
        return fail(status, message, { code, headers: { "x-should-retry": "false" } });
      }
      if (res.destroyed) return log(`${req.method} ${path}: the agent disconnected before the answer`);
      const { chat, usage } = answer;
      try {
        if (isOpenAi && translated.stream) {
          const includeUsage = "includeUsage" in translated && translated.includeUsage === true;
          await sendEvents(res, openAiStreamEvents(chat, usage, { includeUsage }));
        } else if (isOpenAi) sendJson(res, 200, chatToOpenAiResponse(chat, usage));
        else if (translated.stream) await sendEvents(res, anthropicStreamEvents(chat, usage));
        else sendJson(res, 200, chatToAnthropicMessage(chat, usage));
      } catch (error) {
        if (error instanceof EndpointRequestError && !res.headersSent) return fail(error.status, error.message);
        throw error;
      }
    } finally {
      active--;
    }
  }

  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve(undefined);
    });
  });
  const address = server.address();
  return {
    port: typeof address === "object" && address ? address.port : port,
    host,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

// ---- plumbing -----------------------------------------------------------------------------------

/**
 * @param {http.ServerResponse} res
 * @param {number} status
 * @param {unknown} body
 * @param {Record<string, string>} [headers]
 */
function sendJson(res, status, body, headers = {}) {
  if (res.headersSent || res.destroyed) return;
  const data = Buffer.from(JSON.stringify(body), "utf8");
  res.writeHead(status, { ...headers, "content-type": "application/json", "content-length": data.length });
  res.end(data);
}

/**
 * Writes the events with backpressure; stops quietly when the agent goes away.
 * @param {http.ServerResponse} res
 * @param {Iterable<string>} events
 */
async function sendEvents(res, events) {
  const pending = [...events]; // materialized first: a broken answer is refused before any byte
  res.writeHead(200, { "content-type": "text/event-stream; charset=utf-8", "cache-control": "no-cache", connection: "keep-alive" });
  for (const event of pending) {
    if (res.destroyed) return;
    if (!res.write(event)) {
      await new Promise((resolve) => {
        const done = () => {
          res.off("drain", done);
          res.off("close", done);
          resolve(undefined);
        };
        res.on("drain", done);
        res.on("close", done);
      });
    }
  }
  if (!res.destroyed) res.end();
}

/**
 * The request body, refused past `maxBytes` (by its declared length at once, or as it arrives).
 * @param {http.IncomingMessage} req
 * @param {number} maxBytes
 * @returns {Promise<Buffer>}
 */
function readBody(req, maxBytes) {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"]);
    if (Number.isFinite(declared) && declared > maxBytes) {
      reject(new EndpointRequestError(413, `the request body is larger than ${maxBytes} bytes`));
      return;
    }
    /** @type {Buffer[]} */
    const chunks = [];
    let size = 0;
    req.on("data", (/** @type {Buffer} */ chunk) => {
      size += chunk.length;
      if (size > maxBytes) {
        req.removeAllListeners("data");
        req.pause();
        reject(new EndpointRequestError(413, `the request body is larger than ${maxBytes} bytes`));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => resolve(Buffer.concat(chunks)));
    req.on("close", () => {
      if (!req.complete) reject(new Error("the agent aborted the request"));
    });
    req.on("error", reject);
  });
}

/**
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @returns {Promise<T>}
 */
function withTimeout(promise, ms) {
  /** @type {NodeJS.Timeout | undefined} */
  let timer;
  const timeout = new Promise((_resolve, reject) => {
    timer = setTimeout(() => reject(Object.assign(new Error(`no relay answer within ${ms} ms`), { code: "RELAY_CLIENT_TIMEOUT" })), ms);
  });
  return /** @type {Promise<T>} */ (Promise.race([promise, timeout]).finally(() => clearTimeout(timer)));
}

/**
 * Appends one line per failure to the diagnostics file, up to MAX_LOG_BYTES in all (a looping
 * agent must not fill the output directory); lines carry codes and bounded messages, never a
 * request's content. A missing or unwritable file only loses the diagnostics.
 * @param {string | null} file
 */
function createBoundedLog(file) {
  let written = 0;
  try {
    written = file ? fs.statSync(file).size : 0;
  } catch {
    written = 0;
  }
  let isFull = written >= MAX_LOG_BYTES;
  return (/** @type {string} */ text) => {
    if (!file || isFull) return;
    let line = `${new Date().toISOString()} ${text.replace(/[\r\n]+/g, " ").slice(0, MAX_LOG_LINE_CHARS)}\n`;
    if (written + Buffer.byteLength(line) > MAX_LOG_BYTES) {
      line = `${new Date().toISOString()} log limit of ${MAX_LOG_BYTES} bytes reached; later failures are not recorded\n`;
      isFull = true;
    }
    try {
      fs.appendFileSync(file, line, { mode: 0o644 });
      written += Buffer.byteLength(line);
    } catch {
      // diagnostics only
    }
  };
}

/**
 * Splits a string into at most STREAM_DELTA_PARTS pieces, never inside a surrogate pair.
 * @param {string} text
 * @returns {string[]}
 */
export function splitText(text) {
  if (text.length === 0) return [];
  const size = Math.max(1, Math.ceil(text.length / STREAM_DELTA_PARTS));
  const parts = [];
  let start = 0;
  while (start < text.length) {
    let end = Math.min(text.length, start + size);
    const code = text.charCodeAt(end - 1);
    if (end < text.length && code >= 0xd800 && code <= 0xdbff) end++;
    parts.push(text.slice(start, end));
    start = end;
  }
  return parts;
}

/** @param {string} prefix */
function newId(prefix) {
  return `${prefix}${crypto.randomBytes(12).toString("hex")}`;
}

function nowSeconds() {
  return Math.floor(Date.now() / 1000);
}
