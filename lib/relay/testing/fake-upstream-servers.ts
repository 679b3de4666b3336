/**
 * Real HTTP servers on loopback that speak the OpenAI chat-completions and Anthropic messages wire
 * protocols, for tests and the benchmark. They check the credential the way the real services do
 * (and, like them, echo part of a wrong key in the error — the relay must not pass that on).
 */
import http from "node:http";
import type { AddressInfo } from "node:net";

export type TFakeMode = "ok" | "status500" | "hang" | "oversized" | "malformed" | "close";

export type TFakeUpstream = {
  url: string;
  endpoint: string;
  /** Requests received, by what they asked for (never used to answer differently per caller). */
  requests: { authorization: string | undefined; apiKey: string | undefined; body: unknown }[];
  mode: TFakeMode;
  /** Reply text for a conversation. */
  reply: (messages: { role: string; content: string }[]) => string;
  delayMs: number;
  /** When set, the whole 200 body for a request (tool-call answers, finish reasons); else a text reply. */
  respond: ((body: Record<string, unknown>) => unknown) | null;
  close(): Promise<void>;
};

type TProtocol = "openai" | "anthropic";

export async function startFakeOpenAiServer(options: {
  credential: string;
  reply?: TFakeUpstream["reply"];
  recordRequests?: boolean;
}): Promise<TFakeUpstream> {
  return startFake("openai", options);
}

export async function startFakeAnthropicServer(options: {
  credential: string;
  reply?: TFakeUpstream["reply"];
  recordRequests?: boolean;
}): Promise<TFakeUpstream> {
  return startFake("anthropic", options);
}

async function startFake(
  protocol: TProtocol,
  options: { credential: string; reply?: TFakeUpstream["reply"]; recordRequests?: boolean },
): Promise<TFakeUpstream> {
  const path = protocol === "openai" ? "/v1/chat/completions" : "/v1/messages";
  const sockets = new Set<import("node:net").Socket>();
  const state = {
    mode: "ok" as TFakeMode,
    reply:
      options.reply ?? ((messages: { role: string; content: string }[]) => `echo: ${messages.at(-1)?.content ?? ""}`),
    delayMs: 0,
    respond: null as TFakeUpstream["respond"],
  };
  const requests: TFakeUpstream["requests"] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      void (async () => {
        if (state.delayMs) await new Promise((r) => setTimeout(r, state.delayMs));
        let body: Record<string, unknown> = {};
        try {
          body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
          return sendJson(res, 400, { error: { message: "invalid json", type: "invalid_request_error" } });
        }
        const authorization = req.headers.authorization;
        const apiKey = req.headers["x-api-key"] as string | undefined;
        if (options.recordRequests !== false) requests.push({ authorization, apiKey, body });
        if (req.method !== "POST" || req.url !== path) return sendJson(res, 404, { error: { message: "not found" } });
        const presented = protocol === "openai" ? authorization?.replace(/^Bearer /, "") : apiKey;
        if (presented !== options.credential) {
          // Both services name the bad key (partly) in the error body.
          return protocol === "openai"
            ? sendJson(res, 401, {
                error: {
                  message: `Incorrect API key provided: ${presented}`,
                  type: "invalid_request_error",
                  code: "invalid_api_key",
                },
              })
            : sendJson(res, 401, {
                type: "error",
                error: { type: "authentication_error", message: `invalid x-api-key ${presented}` },
              });
        }
        if (protocol === "anthropic" && !req.headers["anthropic-version"])
          return sendJson(res, 400, {
            type: "error",
            error: { type: "invalid_request_error", message: "anthropic-version header is required" },
          });
        switch (state.mode) {
          case "status500":
            return sendJson(res, 500, { error: { message: `upstream exploded; key was ${presented}` } });
          case "hang":
            return; // never answers; the relay's timeout must fire
          case "close":
            req.socket.destroy();
            return;
          case "malformed":
            res.writeHead(200, { "content-type": "application/json" });
            return res.end('{"choices": [');
          case "oversized":
            res.writeHead(200, { "content-type": "application/json" });
            // Streamed without content-length: the cap must hold while reading, not from a header.
            for (let i = 0; i < 64; i++) res.write(" ".repeat(64 * 1024));
            return res.end("{}");
          default:
            break;
        }
        if (state.respond) return sendJson(res, 200, state.respond(body));
        const messages =
          protocol === "openai"
            ? (body.messages as { role: string; content: string }[])
            : [
                ...(body.system ? [{ role: "system", content: String(body.system) }] : []),
                ...(body.messages as { role: string; content: string }[]),
              ];
        const text = state.reply(messages);
        if (protocol === "openai") {
          sendJson(res, 200, {
            id: "chatcmpl-fake",
            object: "chat.completion",
            created: Math.floor(Date.now() / 1000),
            model: body.model,
            choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
            usage: { prompt_tokens: 11, completion_tokens: 7, total_tokens: 18 },
          });
        } else {
          sendJson(res, 200, {
            id: "msg_fake",
            type: "message",
            role: "assistant",
            model: body.model,
            content: [{ type: "text", text }],
            stop_reason: "end_turn",
            usage: { input_tokens: 11, output_tokens: 7 },
          });
        }
      })();
    });
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;
  const fake: TFakeUpstream = {
    url,
    endpoint: url + path,
    requests,
    get mode() {
      return state.mode;
    },
    set mode(value) {
      state.mode = value;
    },
    get reply() {
      return state.reply;
    },
    set reply(value) {
      state.reply = value;
    },
    get delayMs() {
      return state.delayMs;
    },
    set delayMs(value) {
      state.delayMs = value;
    },
    get respond() {
      return state.respond;
    },
    set respond(value) {
      state.respond = value;
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
  return fake;
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
  res.end(text);
}
