/**
 * The worker's half of the mailbox channel: one downloaded request file in, one response file out.
 * Every input gets an answer — oversized, unparsable, wrong-version and cross-task files are
 * refused with a response file like any other refusal — so the worker uploads it and moves on;
 * nothing is retried forever. Refusals the file itself causes are recorded (and deduplicated by
 * sequence) against the task's current capability, since the file may not name a usable handle.
 */
import type { Db } from "../db/client";
import { isAppErrorCode, type AppErrorCode } from "../errors";
import { claimMailboxSequence } from "./capability.repo";
import {
  encodeMailboxResponse,
  isValidMailboxSequence,
  MAILBOX_MAX_REQUEST_FILE_BYTES,
  MAILBOX_MAX_RESPONSE_FILE_BYTES,
  ZMailboxRequestFileSchema,
} from "./mailbox-protocol";
import { relayCall } from "./relay-call";
import { describeSchemaError, ZTaskIdSchema } from "./relay-request";
import { refusalResult, type TRelayCallResult } from "./relay-response";
import type { TRelayTransport } from "./transports/transport";

export type TProcessMailboxRequestOptions = {
  db: Db;
  /** The task whose guest this mailbox belongs to — known to the worker, not read from the file. */
  taskId: string;
  sequence: number;
  /** The downloaded outbox file, as bytes. */
  bytes: Uint8Array;
  transport?: TRelayTransport;
  /** Whose DATA_DIR/credentials/ the upstream credential must be in; the process's DATA_DIR when absent. */
  dataDir?: string;
};

export type TMailboxAnswer = {
  /** Upload these bytes to inbox/<sequence>.json. */
  responseBytes: Buffer;
  status: number;
  /** null on success; RELAY_UPSTREAM_FAILED means the task must be blocked (no fallback). */
  code: AppErrorCode | null;
};

export async function processMailboxRequest(options: TProcessMailboxRequestOptions): Promise<TMailboxAnswer> {
  const result = await answer(options);
  let responseBytes = encodeMailboxResponse(result.status, result.body);
  // Unreachable with the capability ceilings, but a response file is bounded by construction.
  if (responseBytes.length > MAILBOX_MAX_RESPONSE_FILE_BYTES) {
    const refusal = refusalResult(
      "RELAY_TOO_LARGE",
      "The response file would exceed the mailbox limit; it was refused whole.",
    );
    responseBytes = encodeMailboxResponse(refusal.status, refusal.body);
    return { responseBytes, status: refusal.status, code: refusal.code };
  }
  return { responseBytes, status: result.status, code: result.code };
}

async function answer(options: TProcessMailboxRequestOptions): Promise<TRelayCallResult> {
  const { db, taskId, sequence, bytes } = options;
  if (!ZTaskIdSchema.safeParse(taskId).success || !isValidMailboxSequence(sequence)) {
    return refusalResult("RELAY_REQUEST_MALFORMED", "The mailbox task id or sequence number is invalid.");
  }
  if (bytes.byteLength > MAILBOX_MAX_REQUEST_FILE_BYTES) {
    return refuseFile(
      options,
      "RELAY_TOO_LARGE",
      `The request file is larger than ${MAILBOX_MAX_REQUEST_FILE_BYTES} bytes.`,
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(new TextDecoder("utf-8", { fatal: true }).decode(bytes));
  } catch {
    return refuseFile(options, "RELAY_REQUEST_MALFORMED", "The request file is not valid UTF-8 JSON.");
  }
  const file = ZMailboxRequestFileSchema.safeParse(json);
  if (!file.success)
    return refuseFile(
      options,
      "RELAY_REQUEST_MALFORMED",
      `The request file is malformed: ${describeSchemaError(file.error)}`,
    );
  // The worker's task id is the truth: a file naming another task is refused even when its handle
  // is valid for that other task (a guest must not spend someone else's budget through its mailbox).
  if (file.data.taskId !== taskId) return refuseFile(options, "RELAY_REFUSED", "The request file names another task.");
  return relayCall({
    db,
    handle: file.data.handle,
    taskId,
    operation: file.data.operation,
    request: file.data.request,
    channel: "mailbox",
    sequence,
    dataDir: options.dataDir,
    transport: options.transport,
  });
}

/** Records a file-level refusal once per sequence (on the task's newest capability) and answers it. */
async function refuseFile(
  options: TProcessMailboxRequestOptions,
  code: AppErrorCode,
  message: string,
): Promise<TRelayCallResult> {
  const { db, taskId, sequence } = options;
  const cap = await db.relayCapability.findFirst({
    where: { taskId },
    orderBy: { createdAt: "desc" },
    select: { id: true },
  });
  if (cap) {
    const claim = await claimMailboxSequence(db, {
      capabilityId: cap.id,
      channel: "mailbox",
      sequence,
      operation: "unknown",
      outcome: code,
      // Nothing was charged: rows carry charged bytes only (they sum to the capability's bytesUsed).
      requestBytes: 0,
      responseBytes: 0,
      durationMs: 0,
    });
    if (claim.kind === "duplicate" && !(isAppErrorCode(claim.previousOutcome) && claim.previousOutcome === code)) {
      return refusalResult(
        "RELAY_DUPLICATE_REQUEST",
        `Mailbox request ${sequence} was already processed; it is answered once.`,
      );
    }
  }
  return refusalResult(code, message);
}

/**
 * Where a worker starts serving a task's mailbox: one past the highest sequence the task's current
 * capability has recorded — or the first one a killed worker left `pending` (claimed, never
 * answered: its guest still waits). Those claims are closed as INTERNAL first, so each is
 * re-probed once and answered "duplicate" — never sent upstream twice, since its response was lost
 * — and the guest's client re-sends it under a new number. Only the worker that holds the task's
 * lock calls this, so nothing else is in flight for the task. Each provisioning issues a new
 * capability for a new guest whose mailbox starts at 1 again (a revision round, issue 14), so an
 * earlier capability's sequences do not count.
 */
export async function resumeMailboxSequence({ db, taskId }: { db: Db; taskId: string }): Promise<number> {
  const current = await db.relayCapability.findFirst({
    where: { taskId },
    orderBy: { createdAt: "desc" },
    select: { id: true },
  });
  if (!current) return 1;
  const where = { channel: "mailbox", capabilityId: current.id };
  const abandoned = await db.relayCall.aggregate({ where: { ...where, outcome: "pending" }, _min: { sequence: true } });
  if (abandoned._min.sequence !== null) {
    await db.relayCall.updateMany({ where: { ...where, outcome: "pending" }, data: { outcome: "INTERNAL" } });
    return abandoned._min.sequence;
  }
  const result = await db.relayCall.aggregate({ where, _max: { sequence: true } });
  return (result._max.sequence ?? 0) + 1;
}
