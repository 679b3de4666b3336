// @ts-check
// The guest side of the task-scoped model relay. Runs INSIDE the guest (Node 24, no
// dependencies). The guest holds only a task-scoped relay handle — never an upstream credential —
// and reaches the model through one of two channels named in task.json:
//
//   "mailbox": files only, for guests with no network at all (relay-channel-mailbox.mjs).
//   "http":    HTTP/1.1 over the unix socket /run/school-core/relay.sock, which the substrate
//              forwards to the relay endpoint (relay-channel-http.mjs).
//
// This module is what agents and the model endpoint call: it reads task.json, binds a client to
// its channel and checks the shape of the answers. The wire protocol both channels share, and the
// RelayClientError every failure becomes, are in relay-protocol.mjs. Error messages never contain
// the handle.
import { sendHttp } from "./relay-channel-http.mjs";
import { sendMailbox } from "./relay-channel-mailbox.mjs";
import { MAILBOX_POLL_INTERVAL_MS, readBoundedFile, RelayClientError } from "./relay-protocol.mjs";

/** @import { Mailbox } from "./relay-channel-mailbox.mjs" */

// The guest layout: lib/contract/guest-layout.ts (its test keeps these equal).
export const TASK_FILE = "/tmp/school-core-input/task.json";
export const RELAY_SOCKET_PATH = "/run/school-core/relay.sock";
export const MAILBOX_ROOT = "/tmp/relay";
export const MAX_TASK_FILE_BYTES = 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;

/**
 * The `complete` operation's messages and the `chat` operation's request and answer (the
 * provider-neutral contract of lib/relay/chat-request.ts), as the guest programs build and read them.
 * @typedef {{ role: "system" | "user" | "assistant", content: string }} CompleteMessage
 * @typedef {{ id: string, name: string, arguments: string }} ChatToolCall
 * @typedef {{ role: "system" | "user", content: string }
 *   | { role: "assistant", content: string | null, toolCalls: ChatToolCall[] }
 *   | { role: "tool", toolCallId: string, content: string }} ChatMessage
 * @typedef {{ name: string, description?: string, parameters?: Record<string, unknown> }} ChatTool
 * @typedef {{ type: "auto" | "none" | "required" } | { type: "tool", name: string }} ChatToolChoice
 * @typedef {{ messages: ChatMessage[], tools?: ChatTool[], toolChoice?: ChatToolChoice, maxTokens?: number }} ChatRequest
 *   (the relay defaults `tools` to none and `toolChoice` to auto)
 * @typedef {{ message: { role: "assistant", content: string | null, toolCalls: ChatToolCall[] },
 *   finishReason: "stop" | "length" | "tool_calls", model: string }} ChatAnswer
 * @typedef {{ inputTokens?: number, outputTokens?: number, upstream?: string } | null} RelayUsage
 */
/**
 * What task.json says about the relay.
 * @typedef {{ taskId: string, channel: "mailbox" | "http", handle: string, socketPath: string, model: string | null }} RelayTask
 */
/**
 * @typedef {object} RelayClient
 * @property {"mailbox" | "http"} channel
 * @property {(messages: CompleteMessage[], options?: { maxTokens?: number }) => Promise<{ content: string, usage: RelayUsage }>} complete
 * @property {(request: ChatRequest) => Promise<{ chat: ChatAnswer, usage: RelayUsage }>} chat
 */

/**
 * Reads the relay fields of task.json (bounded).
 * @returns {Promise<RelayTask>}
 */
export async function readRelayTask(file = TASK_FILE) {
  const text = await readBoundedFile(file, MAX_TASK_FILE_BYTES);
  if (text === null) throw new RelayClientError("RELAY_CLIENT_CONFIG", "task.json is missing or too large");
  let task;
  try {
    task = JSON.parse(text);
  } catch {
    throw new RelayClientError("RELAY_CLIENT_CONFIG", "task.json is not valid JSON");
  }
  const relay = task?.relay;
  if (
    typeof task?.taskId !== "string" ||
    !relay ||
    typeof relay.handle !== "string" ||
    !["mailbox", "http"].includes(relay.channel)
  ) {
    throw new RelayClientError(
      "RELAY_CLIENT_CONFIG",
      "task.json has no usable relay section (taskId, relay.channel, relay.handle)",
    );
  }
  return {
    taskId: task.taskId,
    channel: relay.channel,
    handle: relay.handle,
    socketPath: typeof relay.socketPath === "string" && relay.socketPath ? relay.socketPath : RELAY_SOCKET_PATH,
    /** The operator-pinned model the model endpoint names (issue 25); null when task.json names none. */
    model: typeof relay.model === "string" && relay.model ? relay.model.slice(0, 200) : null,
  };
}

/**
 * A client bound to one task and channel. Options other than taskId/channel/handle exist for
 * tests; inside a guest the defaults are the protocol's fixed paths.
 * @param {{ taskId: string, channel: string, handle: string, socketPath?: string, mailboxRoot?: string, timeoutMs?: number, pollIntervalMs?: number }} options
 * @returns {RelayClient}
 */
export function createRelayClient({
  taskId,
  channel,
  handle,
  socketPath = RELAY_SOCKET_PATH,
  mailboxRoot = MAILBOX_ROOT,
  timeoutMs = DEFAULT_TIMEOUT_MS,
  pollIntervalMs = MAILBOX_POLL_INTERVAL_MS,
}) {
  if (channel !== "mailbox" && channel !== "http")
    throw new RelayClientError("RELAY_CLIENT_CONFIG", `unknown relay channel "${String(channel).slice(0, 20)}"`);
  /** @type {Mailbox} */
  const mailbox = { root: mailboxRoot, next: null };
  /**
   * @param {string} operation
   * @param {unknown} request
   * @returns {Promise<any>} the answer's body: untrusted JSON, checked by the caller
   */
  async function send(operation, request) {
    if (channel === "http") return sendHttp({ socketPath, handle, taskId, operation, request, timeoutMs });
    return sendMailbox({ mailbox, handle, taskId, operation, request, timeoutMs, pollIntervalMs });
  }
  return {
    channel,
    /** Asks the model; resolves to { content, usage } or rejects with a RelayClientError. */
    async complete(messages, { maxTokens } = {}) {
      const request = { messages, ...(maxTokens === undefined ? {} : { maxTokens }) };
      const body = await send("complete", request);
      const content = body?.completion?.content;
      if (typeof content !== "string")
        throw new RelayClientError("RELAY_CLIENT_PROTOCOL", "the relay answer has no completion content");
      return { content, usage: body.usage ?? null };
    },
    /**
     * One turn of a tool-calling conversation (the `chat` operation; the request is the contract of
     * lib/relay/chat-request.ts). Resolves to { chat: { message, finishReason, model }, usage } or
     * rejects with a RelayClientError.
     */
    async chat(request) {
      const body = await send("chat", request);
      if (!isChatAnswer(body?.chat))
        throw new RelayClientError("RELAY_CLIENT_PROTOCOL", "the relay answer has no chat message");
      return { chat: body.chat, usage: body.usage ?? null };
    },
  };
}

const CHAT_FINISH_REASONS = ["stop", "length", "tool_calls"];

/**
 * The shape the model endpoint relies on; the relay validated the content itself.
 * @param {any} chat
 * @returns {chat is ChatAnswer}
 */
function isChatAnswer(chat) {
  const message = chat?.message;
  return (
    typeof chat?.model === "string" &&
    CHAT_FINISH_REASONS.includes(chat.finishReason) &&
    message?.role === "assistant" &&
    (message.content === null || typeof message.content === "string") &&
    Array.isArray(message.toolCalls) &&
    message.toolCalls.every(
      (/** @type {any} */ call) =>
        typeof call?.id === "string" && typeof call.name === "string" && typeof call.arguments === "string",
    )
  );
}

/** @type {Promise<RelayClient> | undefined} */
let defaultClient;

/**
 * complete() with the channel and handle named in /tmp/school-core-input/task.json.
 * @param {CompleteMessage[]} messages
 * @param {{ maxTokens?: number }} [options]
 */
export async function complete(messages, options = {}) {
  defaultClient ??= readRelayTask().then((task) => createRelayClient(task));
  return (await defaultClient).complete(messages, options);
}

/**
 * chat() with the channel and handle named in /tmp/school-core-input/task.json.
 * @param {ChatRequest} request
 */
export async function chat(request) {
  defaultClient ??= readRelayTask().then((task) => createRelayClient(task));
  return (await defaultClient).chat(request);
}
