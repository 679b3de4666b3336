/**
 * relayCall: the one use case behind both relay channels (HTTP route, mailbox). Order of work:
 * resolve the handle (hash lookup, read fresh every call) → check the task binding → claim the
 * mailbox sequence → validate → ONE atomic admission UPDATE (reserves a slot and the request
 * bytes) → the operator-pinned transport → refuse an oversized response whole → ONE atomic
 * response charge → answer. Every refusal says why; every call with a known capability leaves a
 * RelayCall row with counts and outcome only. A transport failure is RELAY_UPSTREAM_FAILED and
 * revokes the capability: the task blocks, and there is no fallback of any kind.
 */
import type { Db } from "../db/client";
import { isAppError, type AppErrorCode } from "../errors";
import { logWarn } from "../log";
import { classifyAdmission, checkResponseSize, classifyFailedCharge, type TCapabilityState, type TRefusal, type TRequestCheck } from "./admission";
import {
  admitCall,
  chargeResponseAndRecord,
  claimMailboxSequence,
  findCapabilityByHash,
  findCapabilityById,
  finishCallRecord,
  recordRefusedCall,
  revokeCapabilityRows,
  type TCallRecord,
} from "./capability.repo";
import { hashHandle, isWellFormedHandle } from "./handle";
import { isRelayOperation, REVOKE_REASONS, type TRelayChannel } from "./limits";
import { isValidMailboxSequence } from "./mailbox-protocol";
import { describeSchemaError, RELAY_REQUEST_SCHEMAS, ZTaskIdSchema, type TCompleteRequest } from "./relay-request";
import { isRefusalCode, refusalResult, type TRelayCallResult } from "./relay-response";
import { loadRelayTransport } from "./transports/load-transport";
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
  /** A transport port for tests and the benchmark; production resolves the operator-pinned one per call. */
  transport?: TRelayTransport;
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

export async function relayCall(options: TRelayCallOptions): Promise<TRelayCallResult> {
  const startedAt = performance.now();
  const { db, channel } = options;
  // A malformed handle is refused without a database round trip; an unknown one has no
  // capability to record against. Neither message repeats what was sent.
  if (!isWellFormedHandle(options.handle)) return refusalResult("RELAY_REFUSED", "Unknown or malformed relay handle.");
  const cap = await findCapabilityByHash(db, hashHandle(options.handle));
  if (!cap) return refusalResult("RELAY_REFUSED", "Unknown or malformed relay handle.");

  // Rows store a known operation name or "unknown": the caller's string is not kept.
  const operation = isRelayOperation(options.operation) ? options.operation : "unknown";
  const context: TCallContext = { db, cap, channel, sequence: null, operation, startedAt };

  if (options.envelopeRefusal) return refuse(context, { code: options.envelopeRefusal.code, message: options.envelopeRefusal.message }, 0);
  const taskId = ZTaskIdSchema.safeParse(options.taskId);
  if (!taskId.success) return refuse(context, { code: "RELAY_REQUEST_MALFORMED", message: "The relay request is malformed: taskId must be a UUID." }, 0);
  // Cross-task calls are refused before the mailbox claim, so a leaked handle cannot occupy the
  // owning task's sequence numbers.
  if (cap.taskId !== taskId.data) return refuse(context, { code: "RELAY_REFUSED", message: "This relay handle is bound to another task." }, 0);
  // A task on the mailbox channel runs with its network blocked: the HTTP endpoint, reachable
  // from anywhere, is closed to its handle, so a leaked mailbox handle cannot be used there.
  if (channel === "http") {
    const task = await db.task.findUnique({ where: { id: taskId.data }, select: { relayChannel: true } });
    if (task?.relayChannel !== "http") return refuse(context, { code: "RELAY_REFUSED", message: "This task's relay runs over the mailbox only; the HTTP channel is closed to it." }, 0);
  }

  if (channel === "mailbox") {
    if (!isValidMailboxSequence(options.sequence)) return refusalResult("RELAY_REQUEST_MALFORMED", "The mailbox sequence number is out of range.");
    context.sequence = options.sequence;
    const claim = await claimMailboxSequence(db, { ...baseRecord(context), outcome: "pending", requestBytes: 0 } as TCallRecord & { sequence: number });
    if (claim.kind === "duplicate") return duplicateAnswer(options.sequence, claim.previousOutcome);
    context.claimedId = claim.id;
  }

  try {
    return await admitAndCall(context, taskId.data, options);
  } catch (error) {
    // An unexpected failure (database gone) leaves the claimed row visibly failed, not pending.
    if (context.claimedId !== undefined) await finishCallRecord(db, context.claimedId, { outcome: "INTERNAL", requestBytes: 0, responseBytes: 0, durationMs: elapsed(context) }).catch(() => undefined);
    throw error;
  }
}

async function admitAndCall(context: TCallContext, taskId: string, options: TRelayCallOptions): Promise<TRelayCallResult> {
  const { db } = context;
  const { check, value: request } = checkRequest(context.operation, options.request);
  const requestBytes = check.kind === "valid" ? check.bytes : 0;
  const pre = classifyAdmission(context.cap, { taskId, operation: context.operation, request: check });
  // Rows record the bytes CHARGED to the budget, so a capability's rows always sum to bytesUsed:
  // a call refused before or at admission charged nothing.
  if (pre.kind === "refuse") return refuse(context, pre.refusal, 0);
  if (!request) return refuse(context, { code: "RELAY_REQUEST_MALFORMED", message: "The relay request is malformed." }, 0);

  // The operator's upstream setting is read while the admission statement runs (one round trip
  // less per call). Reading a setting touches no upstream; it is only used once admitted.
  const pendingTransport = options.transport ? Promise.resolve(options.transport) : loadRelayTransport({ db });
  pendingTransport.catch(() => undefined);
  const admitted = await admitCall(db, { capabilityId: context.cap.id, taskId, operation: context.operation, requestBytes });
  if (!admitted) {
    // The atomic statement refused; a second read only explains why (counters only grow and
    // revocation only sets, so the fresh row always shows the reason).
    const fresh = await findCapabilityById(db, context.cap.id);
    const post = fresh ? classifyAdmission(fresh, { taskId, operation: context.operation, request: check }) : null;
    const refusal: TRefusal = post?.kind === "refuse" ? post.refusal : { code: "RELAY_REFUSED", message: "The relay refused admission." };
    return refuse(context, refusal, 0);
  }

  let transport: TRelayTransport;
  let completion: { content: string; inputTokens?: number; outputTokens?: number };
  try {
    transport = await pendingTransport;
    completion = await transport.complete({ messages: request.messages, maxTokens: request.maxTokens });
  } catch (error) {
    if (isAppError(error) && error.code === "RELAY_TOO_LARGE") return refuse(context, { code: error.code, message: error.message }, requestBytes);
    // Fail closed: anything else the transport throws is an upstream failure; the capability is
    // revoked so the task blocks with a visible relay error and nothing retries around it.
    const failure = isAppError(error) && error.code === "RELAY_UPSTREAM_FAILED" ? error : upstreamFailure(options.transport?.kind ?? "unknown", "connection_failed");
    logWarn("relay upstream failed", { capabilityId: context.cap.id, taskId, channel: context.channel, code: failure.code, reason: String(failure.details?.reason ?? "unknown"), status: typeof failure.details?.status === "number" ? failure.details.status : null });
    return refuse(context, { code: failure.code, message: failure.message, revokeReason: REVOKE_REASONS.upstreamFailed }, requestBytes);
  }

  const body = { completion: { content: completion.content } };
  const responseBytes = Buffer.byteLength(JSON.stringify(body.completion), "utf8");
  const tooLarge = checkResponseSize(context.cap, responseBytes);
  if (tooLarge) return refuse(context, tooLarge, requestBytes);

  // Successful calls are bounded by the request budget, so each one is always recorded.
  const outcome = `ok:${transport.kind}`;
  const charged = await chargeResponseAndRecord(db, {
    capabilityId: context.cap.id,
    responseBytes,
    record: { ...baseRecord(context), outcome, requestBytes, responseBytes, durationMs: elapsed(context) },
    claimedId: context.claimedId,
  });
  if (!charged) {
    const fresh = await findCapabilityById(db, context.cap.id);
    return refuse(context, fresh ? classifyFailedCharge(fresh, responseBytes) : { code: "RELAY_REFUSED", message: "The relay capability is gone." }, requestBytes);
  }

  return {
    status: 200,
    code: null,
    body: {
      ...body,
      usage: {
        requestBytes,
        responseBytes,
        requestCount: charged.requestCount,
        maxRequests: charged.maxRequests,
        bytesUsed: Number(charged.bytesUsed),
        maxBytes: Number(charged.maxBytes),
        upstream: transport.kind,
        ...(completion.inputTokens !== undefined ? { inputTokens: completion.inputTokens } : {}),
        ...(completion.outputTokens !== undefined ? { outputTokens: completion.outputTokens } : {}),
      },
    },
  };
}

function checkRequest(operation: string, raw: unknown): { check: TRequestCheck; value?: TCompleteRequest } {
  if (!isRelayOperation(operation)) return { check: { kind: "malformed", message: "unknown operation" } };
  const parsed = RELAY_REQUEST_SCHEMAS[operation].safeParse(raw);
  if (!parsed.success) return { check: { kind: "malformed", message: describeSchemaError(parsed.error) } };
  // Bytes charged are the canonical serialization of the validated request, identical on both channels.
  return { check: { kind: "valid", bytes: Buffer.byteLength(JSON.stringify(parsed.data), "utf8") }, value: parsed.data };
}

/** `chargedRequestBytes`: what admission already charged for this call (0 if it was never admitted). */
async function refuse(context: TCallContext, refusal: TRefusal, chargedRequestBytes: number): Promise<TRelayCallResult> {
  if (refusal.revokeReason) await revokeCapabilityRows(context.db, { capabilityId: context.cap.id }, refusal.revokeReason);
  await recordRefusal(context, { outcome: refusal.code, requestBytes: chargedRequestBytes, responseBytes: 0 });
  return refusalResult(refusal.code, refusal.message);
}

async function recordRefusal(context: TCallContext, fields: { outcome: string; requestBytes: number; responseBytes: number }): Promise<void> {
  const durationMs = elapsed(context);
  if (context.claimedId !== undefined) return finishCallRecord(context.db, context.claimedId, { ...fields, durationMs });
  return recordRefusedCall(context.db, { ...baseRecord(context), ...fields, durationMs });
}

function baseRecord(context: TCallContext): TCallRecord {
  return { capabilityId: context.cap.id, channel: context.channel, sequence: context.sequence, operation: context.operation, outcome: "pending", requestBytes: 0, responseBytes: 0, durationMs: 0 };
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
  if (isRefusalCode(previousOutcome) && previousOutcome !== "INTERNAL") {
    return refusalResult(previousOutcome as AppErrorCode, `Mailbox request ${sequence} was already answered with ${previousOutcome}; a mailbox request is answered once.`);
  }
  return refusalResult("RELAY_DUPLICATE_REQUEST", `Mailbox request ${sequence} was already processed; it is answered once and its response is not kept, so it is not answered again.`);
}
