/**
 * The HTTP channel on a plain node:http request: `POST /api/relay/v1/{op}` and nothing else.
 * The handle's form and its capability are checked before a byte of the body is read (any bearer
 * value used to make the server buffer up to 16 MiB — issue 12, item 4); the body is then capped
 * at that capability's request limit plus the envelope, an oversized Content-Length is refused
 * unread, and the strict JSON envelope goes to relayCall. Framework-free: the relay listener
 * (relay-server.ts) serves it outside Next, so a guest reaches nothing else (issue 12, item 6).
 */
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from "node:http";
import type { Db } from "../db/client";
import { userMessageOf } from "../errors";
import { logError } from "../log";
import { findCapabilityByHash } from "./capability.repo";
import { hashHandle, isWellFormedHandle } from "./handle";
import { RELAY_ENVELOPE_BYTES, RELAY_MAX_HTTP_BODY_BYTES } from "./limits";
import { relayCall, type TRelayCallResult } from "./relay-call";
import { describeSchemaError, ZRelayHttpBodySchema } from "./relay-request";
import { refusalResult } from "./relay-response";
import type { TRelayTransport } from "./transports/transport";

const BEARER_PATTERN = /^Bearer ([^\s]+)$/;
/** The only route. The operation segment is bounded; relayCall refuses an unknown one (and records it). */
const ROUTE_PATTERN = /^\/api\/relay\/v1\/([A-Za-z0-9_-]{1,64})$/;
const UNKNOWN_HANDLE = "Unknown or malformed relay handle.";
/** Request limits of known capabilities, to size body reads without a lookup per call. */
const LIMIT_CACHE_ENTRIES = 10_000;

export type TRelayHttpOptions = { db: Db; transport?: TRelayTransport; dataDir?: string };

/**
 * A capability's maxRequestBytes never changes after issue, so it is cached per handle hash
 * (bounded, oldest out first). Only the body cap comes from here: revocation, counters and
 * binding are judged by the admission statement on every call. Unknown handles are never cached.
 */
function createLimitCache() {
  const entries = new Map<string, number>();
  return {
    async maxBodyBytes(db: Db, handleHash: string): Promise<number | null> {
      const known = entries.get(handleHash);
      if (known !== undefined) return known;
      const capability = await findCapabilityByHash(db, handleHash);
      if (!capability) return null;
      const max = Math.min(RELAY_MAX_HTTP_BODY_BYTES, capability.maxRequestBytes + RELAY_ENVELOPE_BYTES);
      if (entries.size >= LIMIT_CACHE_ENTRIES) entries.delete(entries.keys().next().value!);
      entries.set(handleHash, max);
      return max;
    },
  };
}

/** The listener's request handler: every answer is JSON, `no-store`, and never echoes the handle. */
export function createRelayRequestListener(
  options: TRelayHttpOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const limits = createLimitCache();
  return (req, res) => {
    handleRelayRequest(options, limits, req)
      .then((answer) => send(req, res, answer.result, answer.isBodyUnread))
      .catch((error: unknown) => {
        logError("relay request failed", error);
        send(
          req,
          res,
          { status: 500, code: "INTERNAL", body: { error: { code: "INTERNAL", message: userMessageOf(error) } } },
          !req.readableEnded,
        );
      });
  };
}

type TAnswer = { result: TRelayCallResult; isBodyUnread: boolean };

async function handleRelayRequest(
  options: TRelayHttpOptions,
  limits: ReturnType<typeof createLimitCache>,
  req: IncomingMessage,
): Promise<TAnswer> {
  const { db, transport, dataDir } = options;
  const unread = (result: TRelayCallResult): TAnswer => ({ result, isBodyUnread: true });
  const route = ROUTE_PATTERN.exec(req.url ?? "");
  // Anything but the relay route is refused here: the guest's one socket reaches nothing else.
  if (!route)
    return unread(refusalResult("NOT_FOUND", "Not found: this listener serves POST /api/relay/v1/{operation} only."));
  if (req.method !== "POST") return unread(refusalResult("RELAY_REFUSED", "The relay accepts POST only."));
  const operation = route[1]!;

  const handle = BEARER_PATTERN.exec(req.headers.authorization ?? "")?.[1];
  // Without a handle there is no capability to charge or record against; the message never
  // repeats the header.
  if (!handle)
    return unread(refusalResult("RELAY_REFUSED", "A relay handle is required: Authorization: Bearer <handle>."));
  if (!isWellFormedHandle(handle)) return unread(refusalResult("RELAY_REFUSED", UNKNOWN_HANDLE));
  const maxBodyBytes = await limits.maxBodyBytes(db, hashHandle(handle));
  if (maxBodyBytes === null) return unread(refusalResult("RELAY_REFUSED", UNKNOWN_HANDLE));

  const refuseEnvelope = async (code: "RELAY_TOO_LARGE" | "RELAY_REQUEST_MALFORMED", message: string) =>
    relayCall({
      db,
      handle,
      taskId: null,
      operation,
      request: null,
      channel: "http",
      transport,
      dataDir,
      envelopeRefusal: { code, message },
    });
  const body = await readBoundedBody(req, maxBodyBytes);
  if (body.kind === "too_large") {
    return {
      result: await refuseEnvelope(
        "RELAY_TOO_LARGE",
        `The request body is larger than this capability allows (${maxBodyBytes} bytes).`,
      ),
      isBodyUnread: !req.readableEnded,
    };
  }
  if (body.kind === "truncated")
    return {
      result: await refuseEnvelope(
        "RELAY_REQUEST_MALFORMED",
        "The request body is shorter than its Content-Length (cut short in transit).",
      ),
      isBodyUnread: false,
    };
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body.bytes));
  } catch {
    return {
      result: await refuseEnvelope("RELAY_REQUEST_MALFORMED", "The request body is not valid UTF-8 JSON."),
      isBodyUnread: false,
    };
  }
  const envelope = ZRelayHttpBodySchema.safeParse(json);
  if (!envelope.success)
    return {
      result: await refuseEnvelope(
        "RELAY_REQUEST_MALFORMED",
        `The request body is malformed: ${describeSchemaError(envelope.error)}`,
      ),
      isBodyUnread: false,
    };
  const result = await relayCall({
    db,
    handle,
    taskId: envelope.data.taskId,
    operation,
    request: envelope.data.request,
    channel: "http",
    transport,
    dataDir,
  });
  return { result, isBodyUnread: false };
}

/**
 * Writes the answer. A refusal that leaves the body unread is written straight to the socket with
 * `Connection: close`, and the socket is paused, never read again: the rest of the body stays in
 * the kernel's buffers (the sender blocks) instead of passing through this process, and the
 * socket is dropped when the client goes away or after a short grace. Closing at once would
 * reset a client still writing its body before it read the answer; draining would pull up to
 * 16 MiB per request through the heap.
 */
function send(req: IncomingMessage, res: ServerResponse, result: TRelayCallResult, isBodyUnread: boolean): void {
  if (res.headersSent) return;
  const payload = JSON.stringify(result.body);
  const headers = {
    "content-type": "application/json",
    "cache-control": "no-store",
    "content-length": String(Buffer.byteLength(payload)),
  };
  if (!isBodyUnread || req.readableEnded) return void res.writeHead(result.status, headers).end(payload);
  const socket = req.socket;
  socket.pause();
  const head = [
    `HTTP/1.1 ${result.status} ${STATUS_CODES[result.status] ?? ""}`,
    ...Object.entries(headers).map(([k, v]) => `${k}: ${v}`),
    "connection: close",
    "",
    "",
  ].join("\r\n");
  socket.end(head + payload);
  const timer = setTimeout(() => socket.destroy(), UNREAD_BODY_GRACE_MS).unref();
  socket.once("close", () => clearTimeout(timer));
}

const UNREAD_BODY_GRACE_MS = 5_000;

export type TBoundedBody = { kind: "ok"; bytes: Uint8Array } | { kind: "too_large" } | { kind: "truncated" };

/**
 * Reads the body, stopping at maxBytes. A Content-Length over it is refused before anything is
 * read; a body that ends before its Content-Length (client gone) is refused, never parsed.
 */
export function readBoundedBody(req: IncomingMessage, maxBytes: number): Promise<TBoundedBody> {
  const header = req.headers["content-length"];
  const declared = header === undefined ? null : Number(header);
  if (declared !== null && Number.isFinite(declared) && declared > maxBytes)
    return Promise.resolve({ kind: "too_large" });
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const finish = (result: TBoundedBody) => {
      req.off("data", onData).off("end", onEnd).off("close", onClose).off("error", onClose);
      resolve(result);
    };
    // Listeners, not an async iterator: leaving an iterator early destroys the socket, and the
    // refusal must still be written to it.
    const onData = (chunk: Buffer) => {
      size += chunk.byteLength;
      // Stop collecting at once: the rest of the stream is never buffered.
      if (size > maxBytes) {
        req.pause();
        return finish({ kind: "too_large" });
      }
      chunks.push(chunk);
    };
    const onEnd = () =>
      finish(req.complete ? { kind: "ok", bytes: Buffer.concat(chunks, size) } : { kind: "truncated" });
    const onClose = () => finish({ kind: "truncated" });
    req.on("data", onData).on("end", onEnd).on("close", onClose).on("error", onClose);
  });
}
