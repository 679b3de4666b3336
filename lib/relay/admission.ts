/**
 * Pure admission logic. The DECISION to admit is always the atomic SQL statement in
 * capability-admission.repo.ts; this function only explains a refusal (and pre-refuses calls that
 * can never be admitted, so they do not reach the database write at all). Its order is the order
 * a caller is told why: binding, revocation, expiry, operation, request shape, request size, budgets.
 */
import type { AppErrorCode } from "../errors";
import { isExhaustionReason, REVOKE_REASONS, type TRelayChannel } from "./limits";

export type TCapabilityState = {
  id: string;
  taskId: string;
  allowedOps: readonly string[];
  maxRequests: number;
  maxBytes: bigint;
  maxRequestBytes: number;
  maxResponseBytes: number;
  requestCount: number;
  bytesUsed: bigint;
  maxTokens: bigint;
  tokensUsed: bigint;
  /** The model price the capability was issued under (micro-dollars per million tokens). */
  inputMicrosPerMTok: number;
  outputMicrosPerMTok: number;
  deadlineAt: Date;
  revokedAt: Date | null;
  revokedReason: string | null;
  /** The database's clock when the row was read: expiry is judged on one clock, not each host's. */
  dbNow: Date;
};

export type TRefusal = {
  code: AppErrorCode;
  message: string;
  /** The capability must be revoked with this reason before the refusal is returned. */
  revokeReason?: string;
};

/** A valid request's size, and its worst case in tokens (its input bound plus its output-token bound). */
export type TRequestCheck =
  { kind: "valid"; bytes: number; tokenBound: number } | { kind: "malformed"; message: string };

export type TAdmissionDecision = { kind: "admit" } | { kind: "refuse"; refusal: TRefusal };

export type TAdmissionCall = { taskId: string; operation: string; request: TRequestCheck };

export function classifyAdmission(cap: TCapabilityState, call: TAdmissionCall): TAdmissionDecision {
  const refuse = (code: AppErrorCode, message: string, revokeReason?: string): TAdmissionDecision => ({
    kind: "refuse",
    refusal: { code, message, revokeReason },
  });
  if (cap.taskId !== call.taskId) return refuse("RELAY_REFUSED", "This relay handle is bound to another task.");
  if (cap.revokedAt) {
    // Exhaustion is reported as exhaustion even after the capability was revoked for it, so
    // concurrent callers racing the revocation all hear the same 429.
    if (isExhaustionReason(cap.revokedReason))
      return refuse(
        "RELAY_QUOTA_EXHAUSTED",
        `The relay budget is exhausted (${cap.revokedReason}); the capability is revoked.`,
      );
    return refuse("RELAY_REFUSED", `The relay capability is revoked (${cap.revokedReason ?? "no reason given"}).`);
  }
  if (cap.deadlineAt.getTime() <= cap.dbNow.getTime())
    return refuse("RELAY_REFUSED", "The relay capability has expired; it is now revoked.", REVOKE_REASONS.expired);
  if (!cap.allowedOps.includes(call.operation))
    return refuse("RELAY_OPERATION_NOT_ALLOWED", "This operation is not allowed for this relay capability.");
  if (call.request.kind === "malformed")
    return refuse("RELAY_REQUEST_MALFORMED", `The relay request is malformed: ${call.request.message}`);
  if (call.request.bytes > cap.maxRequestBytes)
    return refuse(
      "RELAY_TOO_LARGE",
      `The request is ${call.request.bytes} bytes; this capability accepts at most ${cap.maxRequestBytes}.`,
    );
  if (cap.requestCount >= cap.maxRequests) {
    return refuse(
      "RELAY_QUOTA_EXHAUSTED",
      `The relay request budget (${cap.maxRequests}) is exhausted; the capability is revoked.`,
      REVOKE_REASONS.exhaustedRequests,
    );
  }
  if (cap.bytesUsed + BigInt(call.request.bytes) > cap.maxBytes) {
    return refuse(
      "RELAY_QUOTA_EXHAUSTED",
      `The relay byte budget (${cap.maxBytes}) cannot hold this request; the capability is revoked.`,
      REVOKE_REASONS.exhaustedBytes,
    );
  }
  if (cap.tokensUsed + BigInt(call.request.tokenBound) > cap.maxTokens) {
    // Not revoked: a call with a smaller output-token bound may still fit what is left.
    const left = cap.maxTokens > cap.tokensUsed ? cap.maxTokens - cap.tokensUsed : 0n;
    return refuse(
      "RELAY_TOKENS_EXHAUSTED",
      `The relay token budget (${cap.maxTokens}) cannot hold this call's worst case (${call.request.tokenBound} tokens: its input bound plus its output-token bound); ${left} tokens are left.`,
    );
  }
  return { kind: "admit" };
}

/** A response is delivered whole or not at all: over the per-response cap it is refused, never cut. */
export function checkResponseSize(
  cap: Pick<TCapabilityState, "maxResponseBytes">,
  responseBytes: number,
): TRefusal | null {
  if (responseBytes > cap.maxResponseBytes) {
    return {
      code: "RELAY_TOO_LARGE",
      message: `The upstream response is ${responseBytes} bytes; this capability accepts at most ${cap.maxResponseBytes}. It was refused whole.`,
    };
  }
  return null;
}

/** Explains a failed response charge after re-reading the row. */
export function classifyFailedCharge(cap: TCapabilityState, responseBytes: number): TRefusal {
  if (cap.revokedAt && !isExhaustionReason(cap.revokedReason)) {
    return {
      code: "RELAY_REFUSED",
      message: `The relay capability was revoked while the call was in flight (${cap.revokedReason ?? "no reason given"}); the response is withheld.`,
    };
  }
  if (cap.deadlineAt.getTime() <= cap.dbNow.getTime()) {
    return {
      code: "RELAY_REFUSED",
      message:
        "The relay capability expired while the call was in flight; the response is withheld and the capability is revoked.",
      revokeReason: REVOKE_REASONS.expired,
    };
  }
  return {
    code: "RELAY_QUOTA_EXHAUSTED",
    message: `The response (${responseBytes} bytes) does not fit the remaining relay byte budget; it was refused whole and the capability is revoked.`,
    revokeReason: REVOKE_REASONS.exhaustedBytes,
  };
}

/** Task binding and channel, in the order a caller is told why. */
export function explainBinding(
  cap: Pick<TCapabilityState, "taskId"> & { relayChannel: string },
  taskId: string,
  channel: TRelayChannel,
): TRefusal | null {
  if (cap.taskId !== taskId) return { code: "RELAY_REFUSED", message: "This relay handle is bound to another task." };
  // A task on the mailbox channel runs with its network blocked: the HTTP endpoint, reachable
  // from anywhere, is closed to its handle, so a leaked mailbox handle cannot be used there.
  if (channel === "http" && cap.relayChannel !== "http")
    return {
      code: "RELAY_REFUSED",
      message: "This task's relay runs over the mailbox only; the HTTP channel is closed to it.",
    };
  return null;
}
