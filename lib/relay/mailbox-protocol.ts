/**
 * The mailbox relay channel, for guests with no network at all. The guest and the worker share
 * only files, moved by the provider's files API (which has NO directory listing):
 *
 *   guest   writes  /tmp/relay/outbox/000001.json.tmp (GUEST_MAILBOX_ROOT, contract/guest-layout.ts), then links it to 000001.json (atomic, and
 *                   never overwrites): a reader never sees a partial or replaced request.
 *   worker  probes  outbox/<next>.json (404 = nothing yet), calls processMailboxRequest, uploads
 *                   the returned bytes to inbox/<same>.json, then probes <next + 1>.
 *   guest   polls   inbox/<n>.json until its deadline; a file that does not parse yet is treated
 *                   as not there yet (an upload may be observed mid-write).
 *
 * Rules for the worker's loop (implemented elsewhere):
 * - Sequences start at 1 and are dense. The next one to probe after a restart is
 *   resumeMailboxSequence(); a re-polled sequence is answered once (see relayCall), so a crash
 *   between processing and upload costs that one answer, never a second upstream call.
 * - Before processing outbox/<n>, a worker that can cheaply check inbox/<n> should skip n when it
 *   exists: re-uploading would replace a good answer with the duplicate refusal.
 * - Never download more than MAILBOX_MAX_REQUEST_FILE_BYTES (+1 to detect excess); never probe past
 *   MAILBOX_MAX_SEQUENCE. processMailboxRequest answers every input (malformed and oversized
 *   included) with a response file, so nothing is retried forever.
 *
 * Request file:  {"v":1,"handle":"scr_…","taskId":"…","operation":"complete","request":{…}}
 * Response file: {"v":1,"status":200,"body":{…}}  — body is the same as the HTTP channel's.
 */
import path from "node:path";
import { z } from "zod";
import { GUEST_MAILBOX_ROOT } from "../contract/guest-layout";
import { RELAY_ENVELOPE_BYTES, RELAY_MAX_REQUEST_BYTES_CEILING, RELAY_MAX_RESPONSE_BYTES_CEILING } from "./limits";

export const MAILBOX_PROTOCOL_VERSION = 1;
/** Six digits, zero-padded: `000001.json`. */
export const MAILBOX_SEQUENCE_DIGITS = 6;
/** The highest sequence a worker probes; a guest that needs more has blown any sane budget. */
export const MAILBOX_MAX_SEQUENCE = 10_000;
/** A request file larger than this is refused (RELAY_TOO_LARGE) without being parsed. */
export const MAILBOX_MAX_REQUEST_FILE_BYTES = RELAY_MAX_REQUEST_BYTES_CEILING + RELAY_ENVELOPE_BYTES;
/** Every response file processMailboxRequest produces is at most this large. */
export const MAILBOX_MAX_RESPONSE_FILE_BYTES = RELAY_MAX_RESPONSE_BYTES_CEILING * 2 + RELAY_ENVELOPE_BYTES;
/** How often the reference guest client polls its inbox. */
export const MAILBOX_POLL_INTERVAL_MS = 200;

export function isValidMailboxSequence(value: unknown): value is number {
  return typeof value === "number" && Number.isInteger(value) && value >= 1 && value <= MAILBOX_MAX_SEQUENCE;
}

export function mailboxFileName(sequence: number): string {
  if (!isValidMailboxSequence(sequence)) throw new RangeError(`mailbox sequence out of range: ${sequence}`);
  return `${String(sequence).padStart(MAILBOX_SEQUENCE_DIGITS, "0")}.json`;
}

export function mailboxOutboxPath(sequence: number, root = GUEST_MAILBOX_ROOT): string {
  return path.posix.join(root, "outbox", mailboxFileName(sequence));
}

export function mailboxInboxPath(sequence: number, root = GUEST_MAILBOX_ROOT): string {
  return path.posix.join(root, "inbox", mailboxFileName(sequence));
}

/** The request file (strict: it comes from the guest). */
export const ZMailboxRequestFileSchema = z
  .object({
    v: z.literal(MAILBOX_PROTOCOL_VERSION),
    handle: z.string().max(128),
    taskId: z.string().max(64),
    operation: z.string().max(64),
    request: z.unknown(),
  })
  .strict();

export type TMailboxRequestFile = z.infer<typeof ZMailboxRequestFileSchema>;

/** The response file (read by the guest client). */
export const ZMailboxResponseFileSchema = z
  .object({
    v: z.literal(MAILBOX_PROTOCOL_VERSION),
    status: z.number().int().min(100).max(599),
    body: z.record(z.string(), z.unknown()),
  })
  .strict();

export function encodeMailboxResponse(status: number, body: unknown): Buffer {
  return Buffer.from(JSON.stringify({ v: MAILBOX_PROTOCOL_VERSION, status, body }), "utf8");
}
