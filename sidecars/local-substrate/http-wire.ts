/**
 * HTTP plumbing shared by the public and admin servers: request ids, bearer checks, bounded
 * JSON bodies, the `{"error","code"}` envelope, and the injected faults.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";
import type { Readable } from "node:stream";
import { logError } from "../../lib/log";
import { MALFORMED_JSON_BODY, oversizedBody, type TFault } from "./faults";
import { WireError, wireErrorBody } from "./wire-error";

export type TWireResponse =
  | { status: number; json: unknown }
  | { status: number; body: Buffer | string; contentType: string }
  /** `size` undefined: no declared length, the body is sent chunked (the exportCapOff weakening). */
  | { status: number; stream: Readable; size: number | undefined; contentType: string }
  | { status: 204 };

export function newRequestId(): string {
  return `req-${randomBytes(12).toString("hex")}`;
}

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/** Constant-time bearer check (hash first, so lengths never leak through timing). */
export function hasBearer(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization;
  const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
  return match !== null && timingSafeEqual(digest(match[1]!), digest(token));
}

/** Reads a JSON body of at most maxBytes; an empty body is `undefined`. */
export async function readJsonBody(req: IncomingMessage, maxBytes: number): Promise<unknown> {
  const declared = Number(req.headers["content-length"]);
  if (Number.isFinite(declared) && declared > maxBytes)
    throw new WireError("PAYLOAD_TOO_LARGE", `request body exceeds ${maxBytes} bytes`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) throw new WireError("PAYLOAD_TOO_LARGE", `request body exceeds ${maxBytes} bytes`);
    chunks.push(chunk);
  }
  if (size === 0) return undefined;
  try {
    return JSON.parse(Buffer.concat(chunks).toString("utf8"));
  } catch {
    throw new WireError("BAD_REQUEST", "request body is not valid JSON");
  }
}

/** Splits the raw request target without normalizing it: `..` must reach our checks, not vanish. */
export function splitTarget(rawUrl: string | undefined): { pathname: string; query: URLSearchParams } {
  const url = rawUrl ?? "/";
  const mark = url.indexOf("?");
  return mark === -1
    ? { pathname: url, query: new URLSearchParams() }
    : { pathname: url.slice(0, mark), query: new URLSearchParams(url.slice(mark + 1)) };
}

export function sendResponse(req: IncomingMessage, res: ServerResponse, response: TWireResponse): void {
  // An unread request body (an early error on an upload) would otherwise be drained; close instead.
  const hasBody = Number(req.headers["content-length"] ?? 0) > 0 || req.headers["transfer-encoding"] !== undefined;
  if (hasBody && !req.complete) res.setHeader("connection", "close");
  if ("json" in response) {
    const text = JSON.stringify(response.json);
    res.writeHead(response.status, { "content-type": "application/json", "content-length": Buffer.byteLength(text) });
    res.end(text);
  } else if ("stream" in response) {
    res.writeHead(response.status, {
      "content-type": response.contentType,
      ...(response.size === undefined ? {} : { "content-length": response.size }),
    });
    response.stream.on("error", (error) => {
      logError("local substrate: download stream failed", error);
      res.destroy();
    });
    response.stream.pipe(res);
  } else if ("body" in response) {
    res.writeHead(response.status, {
      "content-type": response.contentType,
      "content-length": Buffer.byteLength(response.body),
    });
    res.end(response.body);
  } else {
    res.writeHead(response.status);
    res.end();
  }
}

export function sendError(req: IncomingMessage, res: ServerResponse, error: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (error instanceof WireError) {
    sendResponse(req, res, { status: error.status, json: wireErrorBody(error) });
    return;
  }
  logError("local substrate: request failed", error, { path: splitTarget(req.url).pathname.slice(0, 200) });
  sendResponse(req, res, { status: 500, json: { error: "internal error", code: "INTERNAL_ERROR" } });
}

/** Drops a response we will not send (phase "after" faults), releasing a stream's file. */
export function discardResponse(response: TWireResponse): void {
  if ("stream" in response) response.stream.destroy();
}

export type THangRegistry = { hold(socket: Socket, ms: number): void; releaseAll(): void };

export function createHangRegistry(): THangRegistry {
  const held = new Map<Socket, NodeJS.Timeout>();
  return {
    hold(socket, ms) {
      // "Never answer" is bounded: after the cap the connection is dropped, so nothing leaks forever.
      const timer = setTimeout(() => socket.destroy(), ms);
      held.set(socket, timer);
      socket.once("close", () => {
        clearTimeout(timer);
        held.delete(socket);
      });
    },
    releaseAll() {
      for (const [socket, timer] of held) {
        clearTimeout(timer);
        socket.destroy();
      }
      held.clear();
    },
  };
}

export function applyFault(
  req: IncomingMessage,
  res: ServerResponse,
  fault: TFault,
  hangs: THangRegistry,
  hangCapMs: number,
): void {
  switch (fault.kind) {
    case "http500":
      sendResponse(req, res, {
        status: 500,
        json: { error: "injected fault: internal error", code: "INTERNAL_ERROR" },
      });
      return;
    case "malformed_json":
      sendResponse(req, res, { status: 200, body: MALFORMED_JSON_BODY, contentType: "application/json" });
      return;
    case "oversized_body":
      sendResponse(req, res, {
        status: 200,
        body: oversizedBody(fault.bytes ?? 5 * 1024 * 1024),
        contentType: "application/json",
      });
      return;
    case "status": {
      const body =
        fault.body === undefined ? { error: `injected fault: status ${fault.status}`, code: "INJECTED" } : fault.body;
      if (typeof body === "string")
        sendResponse(req, res, { status: fault.status!, body, contentType: fault.contentType ?? "text/plain" });
      else
        sendResponse(req, res, {
          status: fault.status!,
          body: JSON.stringify(body),
          contentType: fault.contentType ?? "application/json",
        });
      return;
    }
    case "ignored":
      // success claimed, nothing done (only meaningful with phase "before")
      sendResponse(
        req,
        res,
        fault.status === undefined || fault.status === 204 ? { status: 204 } : { status: fault.status, json: {} },
      );
      return;
    case "reset":
      req.socket.resetAndDestroy();
      return;
    case "hang":
      hangs.hold(req.socket, Math.min(fault.hangMs ?? hangCapMs, hangCapMs));
      return;
  }
}
