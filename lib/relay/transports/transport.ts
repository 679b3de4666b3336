/**
 * The upstream port: one call, messages in, one completion out. Implementations hold the
 * operator-pinned endpoint and read the credential themselves; nothing in the input can steer
 * them. Failures are typed: RELAY_UPSTREAM_FAILED (the task blocks, no fallback) or
 * RELAY_TOO_LARGE (an oversized upstream answer, refused whole).
 */
import { AppError } from "../../errors";
import type { TRelayMessage } from "../relay-request";
import type { TChatAnswer, TChatRequest } from "../chat-request";
import type { TTransportKind } from "../../contract/relay-upstream-setting";

export type TCompletionInput = { messages: readonly TRelayMessage[]; maxTokens?: number; signal?: AbortSignal };
export type TCompletionOutput = { content: string; inputTokens?: number; outputTokens?: number };

/** `chat` (issue 25): the validated request in, the assistant's turn out, with the upstream's token counts when it reports them. */
export type TChatInput = { request: TChatRequest; signal?: AbortSignal };
export type TChatOutput = TChatAnswer & { inputTokens?: number; outputTokens?: number };

export type TRelayTransport = {
  kind: TTransportKind;
  complete(input: TCompletionInput): Promise<TCompletionOutput>;
  chat(input: TChatInput): Promise<TChatOutput>;
};

/**
 * Why an upstream call failed, as a short closed token. The guest sees only this token: never the
 * endpoint (it may be an internal address), a file path, the upstream's error text (it may echo
 * the credential) or the credential.
 */
export type TUpstreamFailureReason =
  | "not_configured"
  | "credential_unavailable"
  /** the credential file or the endpoint broke the rules for where a credential may come from and go to */
  | "refused_by_policy"
  | "script_unavailable"
  | "timeout"
  | "connection_failed"
  | "http_status"
  | "malformed_response"
  | "aborted";

export function upstreamFailure(
  kind: TTransportKind | "unknown",
  reason: TUpstreamFailureReason,
  status?: number,
): AppError {
  const what = status === undefined ? reason : `${reason} ${status}`;
  return new AppError(
    "RELAY_UPSTREAM_FAILED",
    `The model upstream failed (${kind}: ${what}). The task is blocked; there is no fallback.`,
    {
      kind,
      reason,
      status,
    },
  );
}

/** An upstream tool call that names a tool not offered, or whose arguments do not parse: failed closed, never passed on. */
export function upstreamMalformedToolCall(kind: TTransportKind, why: string): AppError {
  return new AppError(
    "RELAY_UPSTREAM_MALFORMED_TOOL_CALL",
    `The model upstream answered with a malformed tool call (${kind}: ${why}).`,
    {
      kind,
    },
  );
}

export function upstreamTooLarge(kind: TTransportKind, limitBytes: number): AppError {
  return new AppError("RELAY_TOO_LARGE", `The upstream response exceeds ${limitBytes} bytes and was refused whole.`, {
    kind,
    limitBytes,
  });
}
