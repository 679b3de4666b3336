/**
 * The relay's fixed vocabulary and hard ceilings. Per-capability limits are chosen by the operator
 * at issue time but can never exceed these ceilings, so one setting cannot turn the relay into a
 * memory or spend attack on the control plane itself.
 */

/** Every operation the relay knows. A capability lists a subset; anything else is refused before the transport. */
export const RELAY_OPERATIONS = ["complete", "chat"] as const;
export type TRelayOperation = (typeof RELAY_OPERATIONS)[number];

export function isRelayOperation(value: string): value is TRelayOperation {
  return (RELAY_OPERATIONS as readonly string[]).includes(value);
}

export const RELAY_CHANNELS = ["http", "mailbox"] as const;
export type TRelayChannel = (typeof RELAY_CHANNELS)[number];

/**
 * Hard ceiling of one request (the serialized `request` object); also the HTTP body read cap minus
 * envelope room. Equal to the ceiling of lib/contract/limits.ts `relay.maxRequestBytes`, so any
 * operator-valid task limit can be issued.
 */
export const RELAY_MAX_REQUEST_BYTES_CEILING = 16 * 1024 * 1024;
/** Hard ceiling of one response (the serialized `completion` object); as above. */
export const RELAY_MAX_RESPONSE_BYTES_CEILING = 16 * 1024 * 1024;
/** Envelope room: the HTTP body and the mailbox file carry taskId/handle around the request. */
export const RELAY_ENVELOPE_BYTES = 4096;
/** The HTTP route never reads more than this from a body, whatever the capability says. */
export const RELAY_MAX_HTTP_BODY_BYTES = RELAY_MAX_REQUEST_BYTES_CEILING + RELAY_ENVELOPE_BYTES;
export const RELAY_MAX_REQUESTS_CEILING = 100_000;
/** 1 TiB: far above any real budget, and far below 2^53 so snapshots can carry plain numbers. */
export const RELAY_MAX_BYTES_CEILING = 2 ** 40;
export const RELAY_MAX_TTL_SECONDS = 7 * 24 * 60 * 60;
/** A hostile guest can send refused calls without spending budget; their rows stop being kept past this. */
export const RELAY_MAX_RECORDED_REFUSALS = 1000;
/** Operator/lifecycle revocation reasons are bounded: they are shown in the UI and kept as evidence. */
export const RELAY_MAX_REASON_CHARS = 200;

export const RELAY_MAX_MESSAGES = 256;
export const RELAY_MAX_TOKENS_CEILING = 32_768;
/** The output-token bound of a call that names none: sent upstream as its max_tokens, and reserved. */
export const RELAY_DEFAULT_MAX_TOKENS = 4_096;
/**
 * A call's input bound in tokens is its request's bytes plus this: a token covers at least one byte
 * of text, the JSON around each message outweighs the per-message tokens a provider adds, and this
 * margin holds the fixed prompt a provider wraps tool definitions in (Anthropic's is a few hundred).
 */
export const RELAY_INPUT_TOKEN_OVERHEAD = 1_024;
/** 10^12 tokens: far above any budget, far below 2^53. */
export const RELAY_MAX_TOKENS_BUDGET_CEILING = 1_000_000_000_000;

/**
 * Revocation reasons the relay writes itself. An `exhausted:` revocation still lets calls that were
 * admitted before it finish (they hold a reserved slot and the byte cap is re-checked when their
 * response is charged); any other revocation refuses in-flight responses too.
 */
export const REVOKE_REASONS = {
  exhaustedRequests: "exhausted:requests",
  exhaustedBytes: "exhausted:bytes",
  expired: "expired",
  upstreamFailed: "upstream_failed",
} as const;

export function isExhaustionReason(reason: string | null | undefined): boolean {
  return typeof reason === "string" && reason.startsWith("exhausted:");
}
