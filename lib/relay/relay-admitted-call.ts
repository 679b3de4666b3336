/**
 * An admitted call, after relayCall's admission statement (relay-call.ts): explains a refusal the
 * statement made from the row it locked, or asks the operator-pinned transport and settles the
 * answer in the second statement (charging what the response actually used and releasing the
 * rest of the reservation). A transport failure revokes the capability: the task blocks, and
 * there is no fallback of any kind.
 */
import type { Db } from "../db/client";
import { isAppError } from "../errors";
import { logWarn } from "../log";
import {
  classifyAdmission,
  checkResponseSize,
  classifyFailedCharge,
  explainBinding,
  type TRefusal,
  type TRequestCheck,
} from "./admission";
import type { TAdmission } from "./capability-admission.repo";
import { settleCall } from "./capability-settlement.repo";
import { revokeCapabilityRows } from "./capability.repo";
import { askTransport, outputBoundOf, type TAnswer, type TValidRequest } from "./ask-transport";
import { RELAY_INPUT_TOKEN_OVERHEAD, REVOKE_REASONS, type TRelayChannel } from "./limits";
import { baseRecord, elapsed, refuse, type TCallContext } from "./relay-call-record";
import { refusalResult, type TRelayCallResult, type TRelaySuccessBody } from "./relay-response";
import { chargeTokens, worstCaseTokens, type TTokenBounds } from "./token-charge";
import { resolveCachedTransport } from "./transports/transport-cache";
import { upstreamFailure, type TRelayTransport } from "./transports/transport";

/** A call its row alone would admit, refused because the calls batched into the same statement used the budget first. */
const BATCH_BUDGET_REFUSAL: TRefusal = {
  code: "RELAY_QUOTA_EXHAUSTED",
  message: "The relay budget cannot hold this request beside the calls admitted with it.",
};

/** A well-formed call as relayCall hands it to admission: the request is validated, the caller's strings are not kept. */
export type TAdmitAndCall = {
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

/** The rest of a call after its admission statement; `context` carries the claimed mailbox row, if any. */
export async function callAdmitted(
  call: TAdmitAndCall,
  admission: TAdmission,
  context: TCallContext,
): Promise<TRelayCallResult> {
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
      explainBinding(admission, taskId, call.channel) ??
      (decision.kind === "refuse" ? decision.refusal : BATCH_BUDGET_REFUSAL);
    return refuse(context, refusal, 0);
  }

  const reservedResponseBytes = admission.reservedResponseBytes;
  const bounds: TTokenBounds = {
    input: call.check.bytes + RELAY_INPUT_TOKEN_OVERHEAD,
    output: outputBoundOf(call.request),
  };
  // A refusal after admission releases the response reservation and keeps the request charged;
  // its tokens are charged at their worst case unless the upstream said what it used.
  const refuseAdmitted = async (refusal: TRefusal, reported?: { inputTokens?: number; outputTokens?: number }) => {
    await settleCall(db, {
      capabilityId: admission.id,
      reservedResponseBytes,
      deliver: false,
      responseBytes: 0,
      tokens: reported ? chargeTokens(admission, bounds, reported) : worstCaseTokens(admission, bounds),
      record: {
        ...baseRecord(context),
        outcome: refusal.code,
        requestBytes,
        responseBytes: 0,
        durationMs: elapsed(context),
      },
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
    return refuseAdmitted({
      code: failure.code,
      message: failure.message,
      revokeReason: REVOKE_REASONS.upstreamFailed,
    });
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
