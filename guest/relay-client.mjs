// @ts-check
// The guest side of the task-scoped model relay. Runs INSIDE the guest (Node 24, no
// dependencies). The guest holds only a task-scoped relay handle — never an upstream credential —
// and reaches the model through one of two channels named in task.json:
//
//   "mailbox": files only, for guests with no network at all. A request is written to
//              /tmp/relay/outbox/000001.json (first as .tmp, then hard-linked into place, so a
//              reader never sees a partial file and an existing request is never replaced); the
//              worker answers in /tmp/relay/inbox/000001.json, which we poll until a deadline.
//   "http":    HTTP/1.1 over the unix socket /run/school-core/relay.sock, which the substrate
//              forwards to the relay endpoint; POST /api/relay/v1/complete with the handle as a
//              bearer token.
//
// The protocol constants mirror lib/relay/mailbox-protocol.ts (a test keeps them equal). Error
// messages never contain the handle.
import fs from "node:fs/promises";
import http from "node:http";
import path from "node:path";

// The guest layout: lib/contract/guest-layout.ts (its test keeps these equal).
export const TASK_FILE = "/tmp/school-core-input/task.json";
export const RELAY_SOCKET_PATH = "/run/school-core/relay.sock";
export const RELAY_HTTP_PATH_PREFIX = "/api/relay/v1/";
export const MAILBOX_ROOT = "/tmp/relay";
export const MAILBOX_PROTOCOL_VERSION = 1;
export const MAILBOX_SEQUENCE_DIGITS = 6;
export const MAILBOX_MAX_SEQUENCE = 10_000;
export const MAILBOX_POLL_INTERVAL_MS = 200;
/** Larger than any answer the relay produces (lib/relay: MAILBOX_MAX_RESPONSE_FILE_BYTES). */
export const MAX_RESPONSE_BYTES = 2 * 16 * 1024 * 1024 + 4096;
export const MAX_TASK_FILE_BYTES = 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 10 * 60 * 1000;

const MAX_ERROR_MESSAGE_CHARS = 500;

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
/** @typedef {{ root: string, next: number | null }} Mailbox */
/** @typedef {{ handle: string, taskId: string, operation: string, request: unknown, timeoutMs: number }} SendOptions */

/** A relay refusal or failure; `code` is the relay's error code (or RELAY_CLIENT_* for local failures). */
export class RelayClientError extends Error {
  /**
   * @param {string} code
   * @param {unknown} message
   * @param {number | null} [status]
   */
  constructor(code, message, status = null) {
    super(String(message).slice(0, MAX_ERROR_MESSAGE_CHARS));
    this.name = "RelayClientError";
    this.code = code;
    this.status = status;
  }
}

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
  if (typeof task?.taskId !== "string" || !relay || typeof relay.handle !== "string" || !["mailbox", "http"].includes(relay.channel)) {
    throw new RelayClientError("RELAY_CLIENT_CONFIG", "task.json has no usable relay section (taskId, relay.channel, relay.handle)");
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
      if (typeof content !== "string") throw new RelayClientError("RELAY_CLIENT_PROTOCOL", "the relay answer has no completion content");
      return { content, usage: body.usage ?? null };
    },
    /**
     * One turn of a tool-calling conversation (the `chat` operation; the request is the contract of
     * lib/relay/chat-request.ts). Resolves to { chat: { message, finishReason, model }, usage } or
     * rejects with a RelayClientError.
     */
    async chat(request) {
      const body = await send("chat", request);
      if (!isChatAnswer(body?.chat)) throw new RelayClientError("RELAY_CLIENT_PROTOCOL", "the relay answer has no chat message");
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
      (/** @type {any} */ call) => typeof call?.id === "string" && typeof call.name === "string" && typeof call.arguments === "string",
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

/** @param {number} sequence */
export function mailboxFileName(sequence) {
  if (!Number.isInteger(sequence) || sequence < 1 || sequence > MAILBOX_MAX_SEQUENCE)
    throw new RangeError(`mailbox sequence out of range: ${sequence}`);
  return `${String(sequence).padStart(MAILBOX_SEQUENCE_DIGITS, "0")}.json`;
}

// ---- mailbox ---------------------------------------------------------------------------------

/**
 * A worker killed while it handled a request leaves that request answered "duplicate" by the next
 * worker (it is never sent upstream twice; its response was lost). The request is then sent once
 * more under a new sequence number, charged as a new call.
 * @param {SendOptions & { mailbox: Mailbox, pollIntervalMs: number }} options
 */
async function sendMailbox(options) {
  try {
    return await sendMailboxOnce(options);
  } catch (error) {
    if (!(error instanceof RelayClientError) || error.code !== "RELAY_DUPLICATE_REQUEST") throw error;
    return sendMailboxOnce(options);
  }
}

/** @param {SendOptions & { mailbox: Mailbox, pollIntervalMs: number }} options */
async function sendMailboxOnce({ mailbox, handle, taskId, operation, request, timeoutMs, pollIntervalMs }) {
  const deadline = Date.now() + timeoutMs;
  const outbox = path.join(mailbox.root, "outbox");
  const inbox = path.join(mailbox.root, "inbox");
  await fs.mkdir(outbox, { recursive: true });
  await fs.mkdir(inbox, { recursive: true });
  const data = JSON.stringify({ v: MAILBOX_PROTOCOL_VERSION, handle, taskId, operation, request });
  const sequence = await publishRequest(mailbox, outbox, data);
  const answerFile = path.join(inbox, mailboxFileName(sequence));
  for (;;) {
    const text = await readBoundedFile(answerFile, MAX_RESPONSE_BYTES);
    if (text !== null) {
      let answer;
      try {
        answer = JSON.parse(text);
      } catch {
        answer = undefined; // an upload observed mid-write: look again
      }
      if (answer !== undefined) return interpretAnswer(answer);
    }
    if (Date.now() >= deadline)
      throw new RelayClientError("RELAY_CLIENT_TIMEOUT", `no relay answer for mailbox request ${sequence} within ${timeoutMs} ms`);
    await sleep(Math.min(pollIntervalMs, Math.max(1, deadline - Date.now())));
  }
}

/**
 * Writes the request under the next free sequence number. The .tmp file is created exclusively
 * (it doubles as the claim on that number, so concurrent writers in the guest cannot collide) and
 * then hard-linked to its final name, which fails rather than replaces an existing request.
 * @param {Mailbox} mailbox
 * @param {string} outbox
 * @param {string} data
 */
async function publishRequest(mailbox, outbox, data) {
  mailbox.next ??= await firstFreeSequence(outbox);
  for (let sequence = mailbox.next; sequence <= MAILBOX_MAX_SEQUENCE; sequence++) {
    const final = path.join(outbox, mailboxFileName(sequence));
    const tmp = `${final}.tmp`;
    try {
      await fs.writeFile(tmp, data, { flag: "wx", mode: 0o644 });
    } catch (error) {
      const code = errorCode(error);
      if (code === "EEXIST") continue;
      throw new RelayClientError("RELAY_CLIENT_IO", `cannot write the mailbox request (${code ?? "error"})`);
    }
    try {
      await fs.link(tmp, final);
    } catch (error) {
      await fs.rm(tmp, { force: true });
      const code = errorCode(error);
      if (code === "EEXIST") continue;
      throw new RelayClientError("RELAY_CLIENT_IO", `cannot publish the mailbox request (${code ?? "error"})`);
    }
    await fs.rm(tmp, { force: true });
    mailbox.next = sequence + 1;
    return sequence;
  }
  throw new RelayClientError("RELAY_CLIENT_EXHAUSTED", `the mailbox allows at most ${MAILBOX_MAX_SEQUENCE} requests`);
}

/**
 * A restarted agent continues after the requests already in the outbox.
 * @param {string} outbox
 */
async function firstFreeSequence(outbox) {
  const names = await fs.readdir(outbox).catch(() => []);
  let highest = 0;
  for (const name of names) {
    const match = /^(\d{6})\.json(?:\.tmp)?$/.exec(name);
    if (match) highest = Math.max(highest, Number(match[1]));
  }
  return highest + 1;
}

// ---- http over the unix socket ---------------------------------------------------------------

/**
 * @param {SendOptions & { socketPath: string }} options
 * @returns {Promise<unknown>}
 */
function sendHttp({ socketPath, handle, taskId, operation, request, timeoutMs }) {
  const payload = Buffer.from(JSON.stringify({ taskId, request }), "utf8");
  return new Promise((resolve, reject) => {
    /** @type {NodeJS.Timeout | undefined} */
    let timer;
    let isSettled = false;
    /**
     * @param {unknown} error
     * @param {unknown} [value]
     */
    const settle = (error, value) => {
      if (isSettled) return;
      isSettled = true;
      clearTimeout(timer);
      if (error) {
        req.destroy();
        reject(error);
      } else resolve(value);
    };
    const req = http.request(
      {
        socketPath,
        method: "POST",
        path: RELAY_HTTP_PATH_PREFIX + encodeURIComponent(operation),
        headers: {
          host: "relay.school-core.internal",
          authorization: `Bearer ${handle}`,
          "content-type": "application/json",
          "content-length": payload.length,
          accept: "application/json",
        },
      },
      (res) => {
        /** @type {Buffer[]} */
        const chunks = [];
        let size = 0;
        res.on("data", (chunk) => {
          size += chunk.length;
          if (size > MAX_RESPONSE_BYTES)
            return settle(new RelayClientError("RELAY_CLIENT_PROTOCOL", `the relay answer is larger than ${MAX_RESPONSE_BYTES} bytes`));
          chunks.push(chunk);
        });
        res.on("end", () => {
          let body;
          try {
            body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
          } catch {
            return settle(
              new RelayClientError(
                "RELAY_CLIENT_PROTOCOL",
                `the relay answered HTTP ${res.statusCode} without JSON`,
                res.statusCode ?? null,
              ),
            );
          }
          try {
            settle(null, interpretAnswer({ v: MAILBOX_PROTOCOL_VERSION, status: res.statusCode, body }));
          } catch (error) {
            settle(error);
          }
        });
        res.on("error", (error) =>
          settle(new RelayClientError("RELAY_CLIENT_IO", `relay connection failed (${errorCode(error) ?? "error"})`)),
        );
      },
    );
    timer = setTimeout(() => settle(new RelayClientError("RELAY_CLIENT_TIMEOUT", `no relay answer within ${timeoutMs} ms`)), timeoutMs);
    req.on("error", (error) =>
      settle(new RelayClientError("RELAY_CLIENT_IO", `cannot reach the relay socket (${errorCode(error) ?? "error"})`)),
    );
    req.end(payload);
  });
}

// ---- shared ----------------------------------------------------------------------------------

/**
 * A v1 answer (mailbox file, or the HTTP status and body): the body on 200, else the relay's refusal thrown.
 * @param {any} answer untrusted JSON
 * @returns {any} the answer's body
 */
function interpretAnswer(answer) {
  if (
    !answer ||
    answer.v !== MAILBOX_PROTOCOL_VERSION ||
    !Number.isInteger(answer.status) ||
    typeof answer.body !== "object" ||
    answer.body === null
  ) {
    throw new RelayClientError("RELAY_CLIENT_PROTOCOL", "the relay answer is not a v1 response");
  }
  if (answer.status === 200) return answer.body;
  const error = answer.body.error ?? {};
  throw new RelayClientError(
    typeof error.code === "string" ? error.code.slice(0, 64) : "RELAY_CLIENT_PROTOCOL",
    typeof error.message === "string" ? error.message : `relay answered ${answer.status}`,
    answer.status,
  );
}

/**
 * @param {string} file
 * @param {number} maxBytes
 * @returns {Promise<string | null>} null when the file is missing or not a regular file
 */
async function readBoundedFile(file, maxBytes) {
  let handle;
  try {
    handle = await fs.open(file, "r");
  } catch {
    return null;
  }
  try {
    const stat = await handle.stat();
    if (!stat.isFile()) return null;
    if (stat.size > maxBytes)
      throw new RelayClientError("RELAY_CLIENT_PROTOCOL", `${path.basename(file)} is larger than ${maxBytes} bytes`);
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}

/**
 * The `code` of a Node system error (ENOENT, EEXIST …), if it has one.
 * @param {unknown} error
 * @returns {string | undefined}
 */
function errorCode(error) {
  const code = /** @type {{ code?: unknown } | null | undefined} */ (error)?.code;
  return typeof code === "string" ? code : undefined;
}

/** @param {number} ms */
function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
