/**
 * The HTTP channel's parsing, framework-free so it is testable without Next: bearer handle from
 * Authorization, a body read with a hard cap (never buffered past it), strict JSON envelope,
 * then relayCall. The route handler only maps the result to a Response.
 */
import type { Db } from "../db/client";
import { findCapabilityByHash } from "./capability.repo";
import { hashHandle, isWellFormedHandle } from "./handle";
import { RELAY_ENVELOPE_BYTES, RELAY_MAX_HTTP_BODY_BYTES } from "./limits";
import { relayCall, type TRelayCallResult } from "./relay-call";
import { describeSchemaError, ZRelayHttpBodySchema } from "./relay-request";
import { refusalResult } from "./relay-response";
import type { TRelayTransport } from "./transports/transport";

const BEARER_PATTERN = /^Bearer ([^\s]+)$/;

export type THandleRelayHttpOptions = { db: Db; operation: string; request: Request; transport?: TRelayTransport };

export async function handleRelayHttpRequest({ db, operation, request, transport }: THandleRelayHttpOptions): Promise<TRelayCallResult> {
  const handle = BEARER_PATTERN.exec(request.headers.get("authorization") ?? "")?.[1];
  // Without a handle there is no capability to charge or record against; the message never
  // repeats the header.
  if (!handle) return refuseUnread(request, "A relay handle is required: Authorization: Bearer <handle>.");
  // The handle's form and its capability are checked before a byte of the body is read: any
  // bearer value used to make the server buffer up to 16 MiB (issue 12, item 4). relayCall looks
  // the capability up again (fresh, for revocation); this lookup only sizes the read.
  if (!isWellFormedHandle(handle)) return refuseUnread(request, "Unknown or malformed relay handle.");
  const capability = await findCapabilityByHash(db, hashHandle(handle));
  if (!capability) return refuseUnread(request, "Unknown or malformed relay handle.");
  const maxBodyBytes = Math.min(RELAY_MAX_HTTP_BODY_BYTES, capability.maxRequestBytes + RELAY_ENVELOPE_BYTES);
  const body = await readBoundedBody(request, maxBodyBytes);
  if (body.kind === "too_large") {
    return relayCall({ db, handle, taskId: null, operation, request: null, channel: "http", transport, envelopeRefusal: { code: "RELAY_TOO_LARGE", message: `The request body is larger than this capability allows (${maxBodyBytes} bytes).` } });
  }
  if (body.kind === "truncated") {
    return relayCall({ db, handle, taskId: null, operation, request: null, channel: "http", transport, envelopeRefusal: { code: "RELAY_REQUEST_MALFORMED", message: "The request body is shorter than its Content-Length (cut short in transit)." } });
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(body.bytes));
  } catch {
    return relayCall({ db, handle, taskId: null, operation, request: null, channel: "http", transport, envelopeRefusal: { code: "RELAY_REQUEST_MALFORMED", message: "The request body is not valid UTF-8 JSON." } });
  }
  const envelope = ZRelayHttpBodySchema.safeParse(json);
  if (!envelope.success) {
    return relayCall({ db, handle, taskId: null, operation, request: null, channel: "http", transport, envelopeRefusal: { code: "RELAY_REQUEST_MALFORMED", message: `The request body is malformed: ${describeSchemaError(envelope.error)}` } });
  }
  return relayCall({ db, handle, taskId: envelope.data.taskId, operation, request: envelope.data.request, channel: "http", transport });
}

/** A refusal that leaves the body unread; the stream is cancelled so nothing buffers it. */
async function refuseUnread(request: Request, message: string): Promise<TRelayCallResult> {
  await request.body?.cancel().catch(() => undefined);
  return refusalResult("RELAY_REFUSED", message);
}

export type TBoundedBody = { kind: "ok"; bytes: Uint8Array } | { kind: "too_large" } | { kind: "truncated" };

/**
 * Reads the body, stopping at maxBytes. A body shorter than its declared Content-Length is
 * refused, never parsed: Next's proxy buffers request bodies up to a limit
 * (experimental.proxyClientMaxBodySize, 10 MB) and silently cuts what is beyond it.
 */
export async function readBoundedBody(request: Request, maxBytes: number): Promise<TBoundedBody> {
  const header = request.headers.get("content-length");
  const declared = header === null ? null : Number(header);
  if (declared !== null && Number.isFinite(declared) && declared > maxBytes) {
    // Refused before reading: the declared size alone decides.
    await request.body?.cancel().catch(() => undefined);
    return { kind: "too_large" };
  }
  if (!request.body) return declared ? { kind: "truncated" } : { kind: "ok", bytes: new Uint8Array(0) };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel().catch(() => undefined);
      return { kind: "too_large" };
    }
    chunks.push(value);
  }
  if (declared !== null && Number.isFinite(declared) && size !== declared) return { kind: "truncated" };
  const out = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    out.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { kind: "ok", bytes: out };
}
