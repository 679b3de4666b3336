/**
 * One bounded JSON POST to an operator-pinned upstream, shared by the OpenAI and Anthropic
 * transports: undici with a keep-alive Agent per connect-timeout, a hard wall-clock timeout,
 * a streaming read that aborts as soon as the body passes its cap (never buffering an
 * unbounded answer), and no redirects (undici's request does not follow them, so a 30x cannot
 * steer the relay at another host).
 */
import fs from "node:fs";
import { Agent, errors as undiciErrors } from "undici";
import { isAppError } from "../../errors";
import type { TTransportKind } from "../../contract/relay-upstream-setting";
import { assertSecureEndpoint } from "../../contract/secure-endpoint";
import { openCredentialFile } from "../../secrets/credential-file";
import { upstreamFailure, upstreamTooLarge } from "./transport";
import { readBodyCapped } from "../../http/read-body-capped";

const MAX_CREDENTIAL_FILE_BYTES = 16 * 1024;
/** Visible ASCII only: a credential with a newline or space could split or forge a header. */
const CREDENTIAL_PATTERN = /^[\x21-\x7e]+$/;

const agents = new Map<number, Agent>();

/** Connection pools are per process and hold no state another instance needs. */
function agentFor(connectTimeoutMs: number): Agent {
  let agent = agents.get(connectTimeoutMs);
  if (!agent) {
    agent = new Agent({
      keepAliveTimeout: 30_000,
      keepAliveMaxTimeout: 120_000,
      connections: 128,
      connect: { timeout: connectTimeoutMs },
    });
    agents.set(connectTimeoutMs, agent);
  }
  return agent;
}

/** Closes the pooled connections (tests and the benchmark, so the process can exit). */
export async function closeUpstreamAgents(): Promise<void> {
  const all = [...agents.values()];
  agents.clear();
  await Promise.all(all.map((agent) => agent.close().catch(() => undefined)));
}

/**
 * Read at call time, every call: nothing caches the credential, and a rotated file takes effect at
 * once. Synchronous on purpose: the file is a few bytes on a local disk (tens of microseconds),
 * while four thread-pool round trips (open, stat, read, close) added ~0.3 ms to every relay call.
 * The file must be in `dataDir`'s credentials directory and not one of our own secrets, checked on
 * every read (CREDENTIAL_FILE_REFUSED; lib/secrets/credential-file.ts): a setting stored before
 * the rule, or a file swapped for a link since, is refused here.
 */
export async function readCredentialFile(kind: TTransportKind, file: string, dataDir: string): Promise<string> {
  // The policy's own refusal is typed and says why (the operator's "Test upstream" shows it).
  const fd = openCredentialFile(file, dataDir);
  try {
    const stat = fs.fstatSync(fd);
    if (stat.size > MAX_CREDENTIAL_FILE_BYTES) throw upstreamFailure(kind, "credential_unavailable");
    const buffer = Buffer.allocUnsafe(MAX_CREDENTIAL_FILE_BYTES + 1);
    const length = fs.readSync(fd, buffer, 0, buffer.length, 0);
    if (length > MAX_CREDENTIAL_FILE_BYTES) throw upstreamFailure(kind, "credential_unavailable");
    const value = buffer.toString("utf8", 0, length).trim();
    if (!CREDENTIAL_PATTERN.test(value)) throw upstreamFailure(kind, "credential_unavailable");
    return value;
  } catch (error) {
    if (isAppError(error)) throw error;
    throw upstreamFailure(kind, "credential_unavailable");
  } finally {
    fs.closeSync(fd);
  }
}

export type TPostJsonOptions = {
  kind: TTransportKind;
  endpoint: string;
  headers: Record<string, string>;
  body: unknown;
  connectTimeoutMs: number;
  requestTimeoutMs: number;
  maxResponseBytes: number;
  signal?: AbortSignal;
};

/** POSTs JSON and returns the parsed 2xx body; every other outcome is a typed failure. */
export async function postJson(options: TPostJsonOptions): Promise<unknown> {
  const { kind } = options;
  // The credential is in the headers: never in clear to anything but loopback, whatever was stored.
  assertSecureEndpoint(options.endpoint, "relay upstream endpoint");
  const url = new URL(options.endpoint);
  const timeout = AbortSignal.timeout(options.requestTimeoutMs);
  const signal = options.signal ? AbortSignal.any([timeout, options.signal]) : timeout;
  let response;
  try {
    response = await agentFor(options.connectTimeoutMs).request({
      origin: url.origin,
      path: url.pathname + url.search,
      method: "POST",
      headers: { ...options.headers, "content-type": "application/json", accept: "application/json" },
      body: JSON.stringify(options.body),
      signal,
      headersTimeout: options.requestTimeoutMs,
      bodyTimeout: options.requestTimeoutMs,
    });
  } catch (error) {
    throw classifyTransportError(kind, error, timeout);
  }
  const declared = Number(response.headers["content-length"]);
  if (Number.isFinite(declared) && declared > options.maxResponseBytes) {
    response.body.destroy();
    throw upstreamTooLarge(kind, options.maxResponseBytes);
  }
  let body: Buffer | "too_large";
  try {
    body = await readBodyCapped(response.body, options.maxResponseBytes);
  } catch (error) {
    if (isAppError(error)) throw error;
    throw classifyTransportError(kind, error, timeout);
  }
  if (body === "too_large") throw upstreamTooLarge(kind, options.maxResponseBytes);
  // The upstream's error text is never read into a message: it may echo the credential.
  if (response.statusCode < 200 || response.statusCode > 299)
    throw upstreamFailure(kind, "http_status", response.statusCode);
  try {
    return JSON.parse(body.toString("utf8"));
  } catch {
    throw upstreamFailure(kind, "malformed_response");
  }
}

function classifyTransportError(kind: TTransportKind, error: unknown, timeout: AbortSignal) {
  if (
    timeout.aborted ||
    error instanceof undiciErrors.HeadersTimeoutError ||
    error instanceof undiciErrors.BodyTimeoutError ||
    error instanceof undiciErrors.ConnectTimeoutError
  ) {
    return upstreamFailure(kind, "timeout");
  }
  if (error instanceof Error && error.name === "AbortError") return upstreamFailure(kind, "aborted");
  return upstreamFailure(kind, "connection_failed");
}
