// @ts-check
// The relay's v1 wire protocol as the guest sees it, shared by both channels of relay-client.mjs
// (relay-channel-mailbox.mjs, relay-channel-http.mjs): the answer envelope and its size limit, the
// mailbox's sequence numbering, and the one error type every relay failure in the guest becomes.
// Runs INSIDE the guest (Node 24, no dependencies); it imports no other guest module, so the
// client and its channels can all import it without a cycle.
//
// The protocol constants mirror lib/relay/mailbox-protocol.ts (guest/relay-client.test.ts keeps
// them equal). Error messages never contain the handle.
import fs from "node:fs/promises";
import path from "node:path";

export const MAILBOX_PROTOCOL_VERSION = 1;
export const MAILBOX_SEQUENCE_DIGITS = 6;
export const MAILBOX_MAX_SEQUENCE = 10_000;
export const MAILBOX_POLL_INTERVAL_MS = 200;
/** Larger than any answer the relay produces (lib/relay: MAILBOX_MAX_RESPONSE_FILE_BYTES). */
export const MAX_RESPONSE_BYTES = 2 * 16 * 1024 * 1024 + 4096;

const MAX_ERROR_MESSAGE_CHARS = 500;

/**
 * What a channel needs to send one request (the client fills it in for every call).
 * @typedef {{ handle: string, taskId: string, operation: string, request: unknown, timeoutMs: number }} SendOptions
 */

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

/** @param {number} sequence */
export function mailboxFileName(sequence) {
  if (!Number.isInteger(sequence) || sequence < 1 || sequence > MAILBOX_MAX_SEQUENCE)
    throw new RangeError(`mailbox sequence out of range: ${sequence}`);
  return `${String(sequence).padStart(MAILBOX_SEQUENCE_DIGITS, "0")}.json`;
}

/**
 * A v1 answer (mailbox file, or the HTTP status and body): the body on 200, else the relay's refusal thrown.
 * @param {any} answer untrusted JSON
 * @returns {any} the answer's body
 */
export function interpretAnswer(answer) {
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
 * Reads a file the guest does not control the size of (a mailbox answer, task.json) without
 * reading more than `maxBytes`.
 * @param {string} file
 * @param {number} maxBytes
 * @returns {Promise<string | null>} null when the file is missing or not a regular file
 */
export async function readBoundedFile(file, maxBytes) {
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
export function errorCode(error) {
  const code = /** @type {{ code?: unknown } | null | undefined} */ (error)?.code;
  return typeof code === "string" ? code : undefined;
}
