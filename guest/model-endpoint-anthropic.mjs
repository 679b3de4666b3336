// @ts-check
// The Anthropic Messages format of the in-guest model endpoint (guest/model-endpoint.mjs): a
// request → the relay's provider-neutral chat request (lib/relay/chat-request.ts), the relay's
// answer → a message object or its server-sent events, and the error type of a failure. Pure
// translation, no I/O. Runs INSIDE the student guest (Node 24, no dependencies).
import {
  checkFields,
  checkKeys,
  EndpointRequestError,
  invalid,
  isObject,
  MAX_TOKENS_CEILING,
  newId,
  readMaxTokens,
  requireString,
  splitText,
} from "./model-endpoint-common.mjs";

/** @import { ChatAnswer, ChatMessage, ChatTool, ChatToolCall, ChatToolChoice, ChatRequest, RelayUsage } from "./relay-client.mjs" */
/** @import { FieldRule } from "./model-endpoint-common.mjs" */

// ---- what is done with each request field ------------------------------------------------------

/**
 * What the Anthropic format does with each request field (FieldRule in model-endpoint-common.mjs).
 * @type {Record<string, FieldRule>}
 */
export const ANTHROPIC_REQUEST_FIELDS = {
  model: { kind: "ignored", note: "any name; the operator-pinned model answers and the response's model names it" },
  messages: {
    kind: "used",
    note: "text, tool_use and tool_result blocks (tool_result content: string or text blocks)",
  },
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
  thinking: {
    kind: "only",
    note: '{type:"disabled"}',
    allows: (value) => isObject(value) && value.type === "disabled",
  },
  stop_sequences: {
    kind: "only",
    note: "none (an empty list)",
    allows: (value) => Array.isArray(value) && value.length === 0,
  },
  output_config: { kind: "refused", note: "not carried" },
  output_format: { kind: "refused", note: "structured output is not carried" },
  mcp_servers: { kind: "refused", note: "no MCP servers" },
  container: { kind: "refused", note: "no containers" },
  context_management: { kind: "refused", note: "not carried" },
  inference_geo: { kind: "refused", note: "not carried" },
};

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
  return invalid(
    `${at}.type: ${type} blocks are not supported here: the relay carries text, tool_use and tool_result only`,
    `${at}.type`,
  );
}

/** @param {Record<string, unknown>} block @param {string} at */
function checkTextBlock(block, at) {
  checkKeys(block, ["type", "text", "cache_control", "citations"], at);
  if (Array.isArray(block.citations) && block.citations.length > 0)
    throw invalid(`${at}.citations: not supported`, `${at}.citations`);
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
  if (!Array.isArray(blocks))
    throw invalid(`${where}.content: must be a string or an array of blocks`, `${where}.content`);
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
      const text =
        block.content === undefined || block.content === null ? "" : anthropicText(block.content, `${at}.content`);
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
  if (message.role === "assistant")
    return [{ role: "assistant", content: texts.length > 0 ? texts.join("\n") : null, toolCalls }];
  return [
    ...toolMessages,
    ...(texts.length > 0 || toolMessages.length === 0
      ? [{ role: /** @type {const} */ ("user"), content: texts.join("\n") }]
      : []),
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
  if (body.max_tokens === undefined || body.max_tokens === null)
    throw invalid("max_tokens: Field required", "max_tokens");
  if (!Array.isArray(body.messages) || body.messages.length === 0)
    throw invalid("messages: must be a non-empty array", "messages");
  const rawTools = body.tools ?? [];
  if (!Array.isArray(rawTools)) throw invalid("tools: must be an array", "tools");
  const tools = rawTools.map((tool, index) => {
    const at = `tools[${index}]`;
    if (!isObject(tool) || (tool.type !== undefined && tool.type !== null && tool.type !== "custom"))
      throw invalid(`${at}.type: only custom tools are supported (no server tools)`, `${at}.type`);
    checkKeys(tool, ["type", "name", "description", "input_schema", "cache_control", "strict"], at);
    if (!isObject(tool.input_schema))
      throw invalid(`${at}.input_schema: must be a JSON Schema object`, `${at}.input_schema`);
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
    ...toolCalls.map((call) => ({
      type: /** @type {const} */ ("tool_use"),
      id: call.id,
      name: call.name,
      input: toolInput(call),
    })),
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
      for (const part of splitText(block.text))
        yield event("content_block_delta", { index, delta: { type: "text_delta", text: part } });
    } else {
      yield event("content_block_start", {
        index,
        content_block: { type: "tool_use", id: block.id, name: block.name, input: {} },
      });
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

// ---- errors on the wire -------------------------------------------------------------------------

/** @param {number} status */
export function anthropicErrorType(status) {
  if (status === 401) return "authentication_error";
  if (status === 403) return "permission_error";
  if (status === 404) return "not_found_error";
  if (status === 413) return "request_too_large";
  if (status === 429) return "rate_limit_error";
  if (status === 504) return "timeout_error";
  if (status >= 500) return "api_error";
  return "invalid_request_error";
}
