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
 */
import type { Db } from "../db/client";
import { isAppError, isAppErrorCode, type AppErrorCode } from "../errors";
import { logWarn } from "../log";
import {
  classifyAdmission,
  checkResponseSize,
  classifyFailedCharge,
  type TCapabilityState,
  type TRefusal,
  type TRequestCheck,
} from "./admission";
import { admitCallByHash, admitMailboxCallByHash, readClaimedOutcome, type TAdmission } from "./capability-admission.repo";
import { settleCall } from "./capability-settlement.repo";
import {
  claimMailboxSequence,
  findCapabilityByHash,
  finishCallRecord,
  recordRefusedCall,
  revokeCapabilityRows,
  type TCallRecord,
} from "./capability.repo";
import { hashHandle, isWellFormedHandle } from "./handle";
import { askTransport, outputBoundOf, type TAnswer, type TValidRequest } from "./ask-transport";
import { isRelayOperation, RELAY_INPUT_TOKEN_OVERHEAD, REVOKE_REASONS, type TRelayChannel } from "./limits";
import { isValidMailboxSequence } from "./mailbox-protocol";
import { describeSchemaError, RELAY_REQUEST_SCHEMAS, ZTaskIdSchema } from "./relay-request";
import { refusalResult, type TRelayCallResult, type TRelaySuccessBody } from "./relay-response";
import { chargeTokens, worstCaseTokens, type TTokenBounds } from "./token-charge";
import { resolveCachedTransport } from "./transports/transport-cache";
import { upstreamFailure, type TRelayTransport } from "./transports/transport";

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

type TCallContext = {
  db: Db;
  cap: TCapabilityState;
  channel: TRelayChannel;
  sequence: number | null;
  operation: string;
  startedAt: number;
  /** The claimed mailbox row, finished instead of inserting a new one. */
  claimedId?: bigint;
};

const UNKNOWN_HANDLE = "Unknown or malformed relay handle.";
const BATCH_BUDGET_REFUSAL: TRefusal = {
  code: "RELAY_QUOTA_EXHAUSTED",
  message: "The relay budget cannot hold this request beside the calls admitted with it.",
};

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
  if (options.envelopeRefusal) return refuse(context, { code: options.envelopeRefusal.code, message: options.envelopeRefusal.message }, 0);
  if (!taskId.success)
    return refuse(context, { code: "RELAY_REQUEST_MALFORMED", message: "The relay request is malformed: taskId must be a UUID." }, 0);
  // Cross-task calls are refused before the mailbox claim, so a leaked handle cannot occupy the
  // owning task's sequence numbers.
  const bound = explainBinding(cap, taskId.data, channel);
  if (bound) return refuse(context, bound, 0);

  if (channel === "mailbox") {
    if (!isValidMailboxSequence(options.sequence))
      return refusalResult("RELAY_REQUEST_MALFORMED", "The mailbox sequence number is out of range.");
    context.sequence = options.sequence;
    const claim = await claimMailboxSequence(db, { ...baseRecord(context), outcome: "pending", requestBytes: 0 } as TCallRecord & {
      sequence: number;
    });
    if (claim.kind === "duplicate") return duplicateAnswer(options.sequence, claim.previousOutcome);
    context.claimedId = claim.id;
  }

  // Only a malformed request reaches this point with its sequence claimed: it is refused and the
  // claimed row says why.
  return finishingClaimOnFailure(context, () => refuse(context, classifyMalformed(cap, taskId.data, operation, request.check), 0));
}

/** The refusal of a call whose request did not parse, in the order a caller is told why. */
function classifyMalformed(cap: TCapabilityState, taskId: string, operation: string, check: TRequestCheck): TRefusal {
  const decision = classifyAdmission(cap, { taskId, operation, request: check });
  return decision.kind === "refuse" ? decision.refusal : { code: "RELAY_REQUEST_MALFORMED", message: "The relay request is malformed." };
}

/** An unexpected failure (database gone) after a mailbox claim leaves the claimed row visibly failed, not pending. */
async function finishingClaimOnFailure(context: TCallContext, body: () => Promise<TRelayCallResult>): Promise<TRelayCallResult> {
  try {
    return await body();
  } catch (error) {
    if (context.claimedId !== undefined)
      await finishCallRecord(context.db, context.claimedId, {
        outcome: "INTERNAL",
        requestBytes: 0,
        responseBytes: 0,
        durationMs: elapsed(context),
      }).catch(() => undefined);
    throw error;
  }
}

/** Task binding and channel, in the order a caller is told why. */
function explainBinding(cap: Pick<TAdmission, "taskId" | "relayChannel">, taskId: string, channel: TRelayChannel): TRefusal | null {
  if (cap.taskId !== taskId) return { code: "RELAY_REFUSED", message: "This relay handle is bound to another task." };
  // A task on the mailbox channel runs with its network blocked: the HTTP endpoint, reachable
  // from anywhere, is closed to its handle, so a leaked mailbox handle cannot be used there.
  if (channel === "http" && cap.relayChannel !== "http")
    return { code: "RELAY_REFUSED", message: "This task's relay runs over the mailbox only; the HTTP channel is closed to it." };
  return null;
}

type TAdmitAndCall = {
  db: Db;
  handleHash: string;
  taskId: string;
  operation: string;
  channel: TRelayChannel;
  check: TRequestCheck & { kind: "valid" };
  request: TValidRequest;
  startedAt: number;
  transport?: TRelayTransport;
  dataDir?: string;
  /** The mailbox request's sequence number: admission claims it in the same statement. */
  mailboxSequence?: number;
};

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

async function callAdmitted(call: TAdmitAndCall, admission: TAdmission, context: TCallContext): Promise<TRelayCallResult> {
  const { db, taskId, operation } = call;
  const requestBytes = call.check.bytes;
  if (!admission.isAdmitted) {
    // The statement judged the row it locked; the same row explains the refusal. Rows record the
    // bytes CHARGED to the budget, so a capability's rows always sum to bytesUsed: a call refused
    // at admission charged nothing.
    // Every condition but the budget is judged on this row exactly as the statement did; a call the
    // row alone would admit was refused by the budget its batch shares (calls before it in the
    // batch that were refused still count with their worst case): the budget, not revoked.
    const decision = classifyAdmission(admission, { taskId, operation, request: call.check });
    const refusal =
      explainBinding(admission, taskId, call.channel) ?? (decision.kind === "refuse" ? decision.refusal : BATCH_BUDGET_REFUSAL);
    return refuse(context, refusal, 0);
  }

  const reservedResponseBytes = admission.reservedResponseBytes;
  const bounds: TTokenBounds = { input: call.check.bytes + RELAY_INPUT_TOKEN_OVERHEAD, output: outputBoundOf(call.request) };
  // A refusal after admission releases the response reservation and keeps the request charged;
  // its tokens are charged at their worst case unless the upstream said what it used.
  const refuseAdmitted = async (refusal: TRefusal, reported?: { inputTokens?: number; outputTokens?: number }) => {
    await settleCall(db, {
      capabilityId: admission.id,
      reservedResponseBytes,
      deliver: false,
      responseBytes: 0,
      tokens: reported ? chargeTokens(admission, bounds, reported) : worstCaseTokens(admission, bounds),
      record: { ...baseRecord(context), outcome: refusal.code, requestBytes, responseBytes: 0, durationMs: elapsed(context) },
      claimedId: context.claimedId,
    });
    if (refusal.revokeReason) await revokeCapabilityRows(db, { capabilityId: admission.id }, refusal.revokeReason);
    return refusalResult(refusal.code, refusal.message);
  };

  let transport: TRelayTransport;
  let answer: TAnswer;
  try {
    transport = call.transport ?? (await resolveCachedTransport(db, admission.upstreamVersion, call.dataDir));
    answer = await askTransport(transport, operation, call.request, bounds.output);
  } catch (error) {
    // Neither revokes: an oversized answer or a model's broken tool call is this call's failure,
    // and the agent may ask again (within its budgets).
    if (isAppError(error) && (error.code === "RELAY_TOO_LARGE" || error.code === "RELAY_UPSTREAM_MALFORMED_TOOL_CALL"))
      return refuseAdmitted({ code: error.code, message: error.message });
    // Fail closed: anything else the transport throws is an upstream failure; the capability is
    // revoked so the task blocks with a visible relay error and nothing retries around it.
    // A refused credential file or endpoint reaches the guest as a token only (its message names a path).
    const failure =
      isAppError(error) && error.code === "RELAY_UPSTREAM_FAILED"
        ? error
        : isAppError(error) && (error.code === "CREDENTIAL_FILE_REFUSED" || error.code === "ENDPOINT_INSECURE")
          ? upstreamFailure(call.transport?.kind ?? "unknown", "refused_by_policy")
          : upstreamFailure(call.transport?.kind ?? "unknown", "connection_failed");
    logWarn("relay upstream failed", {
      capabilityId: admission.id,
      taskId,
      channel: context.channel,
      code: failure.code,
      reason: String(failure.details?.reason ?? "unknown"),
      status: typeof failure.details?.status === "number" ? failure.details.status : null,
    });
    return refuseAdmitted({ code: failure.code, message: failure.message, revokeReason: REVOKE_REASONS.upstreamFailed });
  }

  const { payload, inputTokens, outputTokens } = answer;
  const reported = { inputTokens, outputTokens };
  const responseBytes = Buffer.byteLength(JSON.stringify(Object.values(payload)[0]), "utf8");
  const tooLarge = checkResponseSize(admission, responseBytes);
  if (tooLarge) return refuseAdmitted(tooLarge, reported);
  // Less than the worst case was left of the budget at admission, and the response is larger
  // than what was reserved: refused whole, and the budget is spent.
  if (responseBytes > reservedResponseBytes) {
    return refuseAdmitted(
      {
        code: "RELAY_QUOTA_EXHAUSTED",
        message: `The response (${responseBytes} bytes) does not fit the remaining relay byte budget; it was refused whole and the capability is revoked.`,
        revokeReason: REVOKE_REASONS.exhaustedBytes,
      },
      reported,
    );
  }

  // Statement 2: settlement. Successful calls are bounded by the request budget, so each is recorded.
  const outcome = `ok:${transport.kind}`;
  const tokens = chargeTokens(admission, bounds, reported);
  const settled = await settleCall(db, {
    capabilityId: admission.id,
    reservedResponseBytes,
    deliver: true,
    responseBytes,
    tokens,
    record: { ...baseRecord(context), outcome, requestBytes, responseBytes, durationMs: elapsed(context) },
    claimedId: context.claimedId,
  });
  if (!settled) return refusalResult("RELAY_REFUSED", "The relay capability is gone.");
  if (!settled.isDelivered) {
    // Revoked (not for exhaustion) or expired while the upstream answered: withheld; the row is
    // already recorded as RELAY_REFUSED by the settlement.
    const refusal = classifyFailedCharge({ ...admission, ...settled }, responseBytes);
    if (refusal.revokeReason) await revokeCapabilityRows(db, { capabilityId: admission.id }, refusal.revokeReason);
    return refusalResult(refusal.code, refusal.message);
  }

  const body: TRelaySuccessBody = {
    ...payload,
    usage: {
      requestBytes,
      responseBytes,
      requestCount: settled.requestCount,
      maxRequests: settled.maxRequests,
      bytesUsed: Number(settled.bytesUsed),
      maxBytes: Number(settled.maxBytes),
      upstream: transport.kind,
      ...(inputTokens !== undefined ? { inputTokens } : {}),
      ...(outputTokens !== undefined ? { outputTokens } : {}),
      tokensUsed: Number(settled.tokensUsed),
      maxTokens: Number(settled.maxTokens),
      costMicros: tokens.costMicros,
    },
  };
  return { status: 200, code: null, body };
}

type TCheckedRequest =
  { check: TRequestCheck & { kind: "valid" }; value: TValidRequest } | { check: TRequestCheck & { kind: "malformed" }; value?: undefined };

function checkRequest(operation: string, raw: unknown): TCheckedRequest {
  if (!isRelayOperation(operation)) return { check: { kind: "malformed", message: "unknown operation" } };
  const parsed = RELAY_REQUEST_SCHEMAS[operation].safeParse(raw);
  if (!parsed.success) return { check: { kind: "malformed", message: describeSchemaError(parsed.error) } };
  // Bytes charged are the canonical serialization of the validated request, identical on both channels.
  const bytes = Buffer.byteLength(JSON.stringify(parsed.data), "utf8");
  const tokenBound = bytes + RELAY_INPUT_TOKEN_OVERHEAD + outputBoundOf(parsed.data);
  return { check: { kind: "valid", bytes, tokenBound }, value: parsed.data };
}

/** `chargedRequestBytes`: what admission already charged for this call (0 if it was never admitted). */
async function refuse(context: TCallContext, refusal: TRefusal, chargedRequestBytes: number): Promise<TRelayCallResult> {
  if (refusal.revokeReason) await revokeCapabilityRows(context.db, { capabilityId: context.cap.id }, refusal.revokeReason);
  await recordRefusal(context, { outcome: refusal.code, requestBytes: chargedRequestBytes, responseBytes: 0 });
  return refusalResult(refusal.code, refusal.message);
}

async function recordRefusal(
  context: TCallContext,
  fields: { outcome: string; requestBytes: number; responseBytes: number },
): Promise<void> {
  const durationMs = elapsed(context);
  if (context.claimedId !== undefined) return finishCallRecord(context.db, context.claimedId, { ...fields, durationMs });
  return recordRefusedCall(context.db, { ...baseRecord(context), ...fields, durationMs });
}

function baseRecord(context: TCallContext): TCallRecord {
  return {
    capabilityId: context.cap.id,
    channel: context.channel,
    sequence: context.sequence,
    operation: context.operation,
    outcome: "pending",
    requestBytes: 0,
    responseBytes: 0,
    durationMs: 0,
  };
}

function elapsed(context: TCallContext): number {
  return Math.min(2_147_483_647, Math.round(performance.now() - context.startedAt));
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
