/**
 * relayCall: the one use case behind both relay channels (the relay listener, the mailbox). A
 * well-formed HTTP call is two statements (issue 16): ONE admission that looks the capability up
 * by handle hash and checks every condition while it reserves a slot, the request bytes and the
 * worst-case response; then the operator-pinned transport (cached per setting version); then ONE
 * settlement that charges the actual response, releases the rest and writes the call row. A call
 * that must be recorded before admission (malformed envelope, mailbox sequence claim) reads the
 * capability first. Every refusal says why; every call with a known capability leaves a RelayCall
 * row with counts and outcome only. A transport failure is RELAY_UPSTREAM_FAILED and revokes the
 * capability: the task blocks, and there is no fallback of any kind.
 *
 * This file takes a call up to its admission (and answers what never gets that far); what follows
 * admission is relay-admitted-call.ts, and the call row every path leaves is relay-call-record.ts.
 */
import type { Db } from "../db/client";
import { isAppErrorCode, type AppErrorCode } from "../errors";
import {
  classifyAdmission,
  explainBinding,
  type TCapabilityState,
  type TRefusal,
  type TRequestCheck,
} from "./admission";
import {
  admitCallByHash,
  admitMailboxCallByHash,
  readClaimedOutcome,
  type TAdmission,
} from "./capability-admission.repo";
import { claimMailboxSequence, findCapabilityByHash, type TCallRecord } from "./capability.repo";
import { hashHandle, isWellFormedHandle } from "./handle";
import { outputBoundOf, type TValidRequest } from "./ask-transport";
import { isRelayOperation, RELAY_INPUT_TOKEN_OVERHEAD, type TRelayChannel } from "./limits";
import { isValidMailboxSequence } from "./mailbox-protocol";
import { callAdmitted, type TAdmitAndCall } from "./relay-admitted-call";
import { baseRecord, finishingClaimOnFailure, refuse, type TCallContext } from "./relay-call-record";
import { describeSchemaError, RELAY_REQUEST_SCHEMAS, ZTaskIdSchema } from "./relay-request";
import { refusalResult, type TRelayCallResult } from "./relay-response";
import type { TRelayTransport } from "./transports/transport";

export type TRelayCallOptions = {
  db: Db;
  /** The bearer handle as the caller sent it (untrusted). */
  handle: unknown;
  /** The task the caller says the call belongs to (untrusted; must match the capability's). */
  taskId: unknown;
  /** The operation named by the caller (untrusted). */
  operation: string;
  /** The operation's request as the caller sent it (untrusted, validated here). */
  request: unknown;
  channel: TRelayChannel;
  /** Mailbox only: the request file's sequence number; each is answered once. */
  sequence?: number;
  /**
   * The channel could not read the envelope (oversized or unparsable body) but did learn the
   * handle: the refusal is still answered and recorded against the capability.
   */
  envelopeRefusal?: { code: "RELAY_REQUEST_MALFORMED" | "RELAY_TOO_LARGE"; message: string };
  /** A transport port for tests and the benchmark; production resolves the operator-pinned one (cached per setting version). */
  transport?: TRelayTransport;
  /** Whose DATA_DIR/credentials/ the upstream credential must be in; the process's DATA_DIR when absent. */
  dataDir?: string;
};

export type { TRelayCallResult } from "./relay-response";

const UNKNOWN_HANDLE = "Unknown or malformed relay handle.";

export async function relayCall(options: TRelayCallOptions): Promise<TRelayCallResult> {
  const startedAt = performance.now();
  const { db, channel } = options;
  // A malformed handle is refused without a database round trip; an unknown one has no
  // capability to record against. Neither message repeats what was sent.
  if (!isWellFormedHandle(options.handle)) return refusalResult("RELAY_REFUSED", UNKNOWN_HANDLE);
  const handleHash = hashHandle(options.handle);
  // Rows store a known operation name or "unknown": the caller's string is not kept.
  const operation = isRelayOperation(options.operation) ? options.operation : "unknown";
  const taskId = ZTaskIdSchema.safeParse(options.taskId);
  const request = checkRequest(operation, options.request);

  // The hot path: a well-formed call goes straight to the admission statement, which also finds
  // the capability (and explains its own refusal from the row it locked); on the mailbox the
  // same statement claims the request's sequence number.
  if (!options.envelopeRefusal && taskId.success && request.value) {
    const isMailbox = channel === "mailbox";
    if (isMailbox && !isValidMailboxSequence(options.sequence))
      return refusalResult("RELAY_REQUEST_MALFORMED", "The mailbox sequence number is out of range.");
    return admitAndCall({
      db,
      handleHash,
      taskId: taskId.data,
      operation,
      channel,
      check: request.check,
      request: request.value,
      startedAt,
      transport: options.transport,
      dataDir: options.dataDir,
      mailboxSequence: isMailbox ? options.sequence : undefined,
    });
  }

  const cap = await findCapabilityByHash(db, handleHash);
  if (!cap) return refusalResult("RELAY_REFUSED", UNKNOWN_HANDLE);
  const context: TCallContext = { db, cap, channel, sequence: null, operation, startedAt };
  if (options.envelopeRefusal)
    return refuse(context, { code: options.envelopeRefusal.code, message: options.envelopeRefusal.message }, 0);
  if (!taskId.success)
    return refuse(
      context,
      { code: "RELAY_REQUEST_MALFORMED", message: "The relay request is malformed: taskId must be a UUID." },
      0,
    );
  // Cross-task calls are refused before the mailbox claim, so a leaked handle cannot occupy the
  // owning task's sequence numbers.
  const bound = explainBinding(cap, taskId.data, channel);
  if (bound) return refuse(context, bound, 0);

  if (channel === "mailbox") {
    if (!isValidMailboxSequence(options.sequence))
      return refusalResult("RELAY_REQUEST_MALFORMED", "The mailbox sequence number is out of range.");
    context.sequence = options.sequence;
    const claim = await claimMailboxSequence(db, {
      ...baseRecord(context),
      outcome: "pending",
      requestBytes: 0,
    } as TCallRecord & {
      sequence: number;
    });
    if (claim.kind === "duplicate") return duplicateAnswer(options.sequence, claim.previousOutcome);
    context.claimedId = claim.id;
  }

  // Only a malformed request reaches this point with its sequence claimed: it is refused and the
  // claimed row says why.
  return finishingClaimOnFailure(context, () =>
    refuse(context, classifyMalformed(cap, taskId.data, operation, request.check), 0),
  );
}

/** The refusal of a call whose request did not parse, in the order a caller is told why. */
function classifyMalformed(cap: TCapabilityState, taskId: string, operation: string, check: TRequestCheck): TRefusal {
  const decision = classifyAdmission(cap, { taskId, operation, request: check });
  return decision.kind === "refuse"
    ? decision.refusal
    : { code: "RELAY_REQUEST_MALFORMED", message: "The relay request is malformed." };
}

async function admitAndCall(call: TAdmitAndCall): Promise<TRelayCallResult> {
  const { db, taskId, operation } = call;
  const requestBytes = call.check.bytes;
  // Statement 1: admission (on the mailbox, with the sequence claim).
  const sequence = call.mailboxSequence;
  let admission: TAdmission | null;
  let claimedId: bigint | null = null;
  if (sequence === undefined) {
    const tokenBound = call.check.tokenBound;
    admission = await admitCallByHash(db, {
      handleHash: call.handleHash,
      taskId,
      operation,
      requestBytes,
      tokenBound,
      channel: call.channel,
    });
  } else {
    const tokenBound = call.check.tokenBound;
    const mailbox = await admitMailboxCallByHash(db, {
      handleHash: call.handleHash,
      taskId,
      operation,
      requestBytes,
      tokenBound,
      sequence,
    });
    admission = mailbox;
    claimedId = mailbox?.claimedId ?? null;
  }
  if (!admission) return refusalResult("RELAY_REFUSED", UNKNOWN_HANDLE);
  const context: TCallContext = {
    db,
    cap: admission,
    channel: call.channel,
    sequence: null,
    operation,
    startedAt: call.startedAt,
  };
  if (sequence !== undefined) {
    if (claimedId === null) {
      // Not claimed: another task's handle (refused, recorded without a sequence claim), or a re-poll.
      const bound = explainBinding(admission, taskId, call.channel);
      if (bound) return refuse(context, bound, 0);
      return duplicateAnswer(sequence, await readClaimedOutcome(db, { capabilityId: admission.id, sequence }));
    }
    context.claimedId = claimedId;
    context.sequence = sequence;
  }
  return finishingClaimOnFailure(context, () => callAdmitted(call, admission, context));
}

type TCheckedRequest =
  | { check: TRequestCheck & { kind: "valid" }; value: TValidRequest }
  | { check: TRequestCheck & { kind: "malformed" }; value?: undefined };

function checkRequest(operation: string, raw: unknown): TCheckedRequest {
  if (!isRelayOperation(operation)) return { check: { kind: "malformed", message: "unknown operation" } };
  const parsed = RELAY_REQUEST_SCHEMAS[operation].safeParse(raw);
  if (!parsed.success) return { check: { kind: "malformed", message: describeSchemaError(parsed.error) } };
  // Bytes charged are the canonical serialization of the validated request, identical on both channels.
  const bytes = Buffer.byteLength(JSON.stringify(parsed.data), "utf8");
  const tokenBound = bytes + RELAY_INPUT_TOKEN_OVERHEAD + outputBoundOf(parsed.data);
  return { check: { kind: "valid", bytes, tokenBound }, value: parsed.data };
}

/**
 * A re-polled mailbox sequence. Responses are never stored (payloads stay out of the database),
 * so a sequence answered before is not answered with content again: a refusal is repeated with
 * its code, anything else is RELAY_DUPLICATE_REQUEST. Either way the upstream is not called.
 */
function duplicateAnswer(sequence: number, previousOutcome: string): TRelayCallResult {
  if (isAppErrorCode(previousOutcome) && previousOutcome !== "INTERNAL") {
    return refusalResult(
      previousOutcome as AppErrorCode,
      `Mailbox request ${sequence} was already answered with ${previousOutcome}; a mailbox request is answered once.`,
    );
  }
  return refusalResult(
    "RELAY_DUPLICATE_REQUEST",
    `Mailbox request ${sequence} was already processed; it is answered once and its response is not kept, so it is not answered again.`,
  );
}
