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
//   names it (OPENAI_REQUEST_FIELDS / ANTHROPIC_REQUEST_FIELDS, in the format modules). A field the
//   relay cannot carry is never dropped silently: an agent that asked for n=2 or an image must
//   learn it did not get it.
// - The relay call is not streamed. A streaming request waits for the relay's complete answer and
//   only then sends the status line, so a refusal is an HTTP error the SDK raises as such (not an
//   error event mid-stream); the events are synthesized from the answer, content split into a few
//   deltas, exactly in the providers' event order.
// - Relay refusals (budget spent, capability revoked, upstream failed) carry `x-should-retry: false`,
//   which both SDKs obey: retrying cannot succeed and would only spend the agent's time.
// - Hostile or broken agents share the guest with it: the body is capped (the relay's request
//   ceiling plus envelope), concurrent requests are capped, receiving a request is timed, a relay
//   call is timed, and a client that disconnects at any point only loses its own answer.
import http from "node:http";
import {
  anthropicErrorType,
  anthropicRequestToChat,
  anthropicStreamEvents,
  chatToAnthropicMessage,
} from "./model-endpoint-anthropic.mjs";
import { EndpointRequestError, nowSeconds } from "./model-endpoint-common.mjs";
import { createBoundedLog, readBody, sendEvents, sendJson, withTimeout } from "./model-endpoint-http.mjs";
import {
  chatToOpenAiResponse,
  openAiErrorType,
  openAiRequestToChat,
  openAiStreamEvents,
} from "./model-endpoint-openai.mjs";
import { createRelayClient, readRelayTask, TASK_FILE } from "./relay-client.mjs";

/** @import { RelayClient } from "./relay-client.mjs" */
/** @typedef {Pick<RelayClient, "chat">} ChatClient */

// The guest layout: lib/contract/guest-layout.ts (its test keeps these equal).
export const MODEL_ENDPOINT_PORT = 7800;
export const LOG_FILE = "/tmp/school-core-output/model-endpoint.log";

/** Loopback only: the agent is the one client; nothing else in or outside the guest may call it. */
export const LOOPBACK_HOSTS = ["127.0.0.1", "::1"];
/** lib/relay/limits.ts RELAY_MAX_HTTP_BODY_BYTES (a test keeps them equal). */
export const MAX_BODY_BYTES = 16 * 1024 * 1024 + 4096;
export const MAX_CONCURRENT_REQUESTS = 16;
/** Receiving one whole request (headers and body) from the agent. */
export const REQUEST_RECEIVE_TIMEOUT_MS = 60_000;
/** One relay call; the relay client's own deadline (10 min) normally fires first. */
export const RELAY_CALL_TIMEOUT_MS = 11 * 60 * 1000;
/** The model name when task.json pins none (the scripted demo transport). */
export const DEFAULT_MODEL_ID = "school-core-relay";

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
 * Starts the endpoint as every student guest gets it: the relay client of task.json's relay section
 * (channel, handle, socket), its pinned model, and the guest layout's port, host and log file. The
 * runner calls this before the agent starts; qualification probe P2's program calls the same
 * function in its guests (lib/probes/p2-model-endpoint.ts), so what the probes observe is the
 * endpoint students get.
 * @param {string} [taskFile]
 */
export async function startTaskModelEndpoint(taskFile = TASK_FILE) {
  const relayTask = await readRelayTask(taskFile);
  return startModelEndpoint({ client: createRelayClient(relayTask), model: relayTask.model });
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
  if (!LOOPBACK_HOSTS.includes(host))
    throw new Error(`the model endpoint listens on loopback only (${LOOPBACK_HOSTS.join(", ")})`);
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
        const failure = /** @type {{ code?: unknown, status?: unknown, message?: unknown } | null | undefined} */ (
          error
        );
        const code = typeof failure?.code === "string" ? failure.code : "RELAY_CLIENT_PROTOCOL";
        const relayStatus =
          typeof failure?.status === "number" &&
          Number.isInteger(failure.status) &&
          failure.status >= 400 &&
          failure.status <= 599
            ? failure.status
            : null;
        const status =
          relayStatus ?? LOCAL_RELAY_ERROR_STATUS[/** @type {keyof LOCAL_RELAY_ERROR_STATUS} */ (code)] ?? 502;
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
