/**
 * A failed substrate call. Carries what an operator needs and nothing secret: a stable code,
 * the HTTP status, the provider's request id and a bounded (≤ 2 KiB), sanitized excerpt of the
 * provider's body (seed 001 finding B: the body held the whole explanation and was discarded).
 */
import { AppError } from "../errors";
import { sanitizeExcerpt } from "../redact";

export const SUBSTRATE_ERROR_CODES = [
  /** Refused before any request: a configuration the provider cannot start (finding A). */
  "SUBSTRATE_CONFIG_REFUSED",
  "SUBSTRATE_UNAUTHORIZED",
  "SUBSTRATE_FORBIDDEN",
  "SUBSTRATE_NOT_FOUND",
  "SUBSTRATE_CONFLICT",
  "SUBSTRATE_BAD_REQUEST",
  "SUBSTRATE_QUOTA",
  "SUBSTRATE_PAYMENT_REQUIRED",
  "SUBSTRATE_RATE_LIMITED",
  "SUBSTRATE_UNAVAILABLE",
  "SUBSTRATE_INTERNAL",
  /** No answer within the call's deadline: the request may or may not have taken effect. */
  "SUBSTRATE_TIMEOUT",
  /** The connection failed or was reset: the request may or may not have taken effect. */
  "SUBSTRATE_NETWORK",
  /** The answer does not match the wire contract. */
  "SUBSTRATE_MALFORMED_RESPONSE",
  /** The answer is larger than we are willing to read. */
  "SUBSTRATE_RESPONSE_TOO_LARGE",
  /** The machine reached error/stopped/deleted while we waited for it to be ready. */
  "SUBSTRATE_MACHINE_FAILED",
  /** The machine did not become ready within the bounded wait. */
  "SUBSTRATE_NOT_READY",
  /** The credential file is missing or unreadable. */
  "SUBSTRATE_CREDENTIAL_MISSING",
] as const;

export type SubstrateErrorCode = (typeof SUBSTRATE_ERROR_CODES)[number];

export const MAX_PROVIDER_EXCERPT_BYTES = 2048;

const AMBIGUOUS: readonly SubstrateErrorCode[] = [
  "SUBSTRATE_TIMEOUT",
  "SUBSTRATE_NETWORK",
  "SUBSTRATE_UNAVAILABLE",
  "SUBSTRATE_INTERNAL",
  "SUBSTRATE_MALFORMED_RESPONSE",
  "SUBSTRATE_RESPONSE_TOO_LARGE",
];

export class SubstrateError extends AppError {
  readonly substrateCode: SubstrateErrorCode;
  readonly httpStatusFromProvider: number | undefined;
  readonly requestId: string | undefined;
  readonly providerExcerpt: string | undefined;
  readonly operation: string;

  constructor(options: {
    code: SubstrateErrorCode;
    operation: string;
    message: string;
    status?: number;
    requestId?: string;
    body?: string;
    secrets?: readonly string[];
  }) {
    const excerpt =
      options.body === undefined
        ? undefined
        : sanitizeExcerpt(options.body, MAX_PROVIDER_EXCERPT_BYTES, options.secrets);
    const statusText = options.status
      ? ` (HTTP ${options.status}${options.requestId ? `, request ${sanitizeExcerpt(options.requestId, 100)}` : ""})`
      : "";
    super(
      "SUBSTRATE_FAILED",
      `${options.operation}: ${sanitizeExcerpt(options.message, 600, options.secrets)}${statusText}${excerpt ? `: ${excerpt}` : ""}`,
    );
    this.name = "SubstrateError";
    this.substrateCode = options.code;
    this.operation = options.operation;
    this.httpStatusFromProvider = options.status;
    this.requestId = options.requestId === undefined ? undefined : sanitizeExcerpt(options.requestId, 100);
    this.providerExcerpt = excerpt;
  }

  /** The request may have taken effect at the provider (so a create may have made a machine). */
  get isAmbiguous(): boolean {
    return AMBIGUOUS.includes(this.substrateCode);
  }

  /** Bounded, secret-free fields for durable evidence. */
  toEvidence() {
    return {
      code: this.substrateCode,
      operation: this.operation,
      status: this.httpStatusFromProvider ?? null,
      requestId: this.requestId ?? null,
      excerpt: this.providerExcerpt ?? null,
    };
  }
}

export function isSubstrateError(value: unknown): value is SubstrateError {
  return value instanceof SubstrateError;
}

export function substrateCodeForStatus(status: number): SubstrateErrorCode {
  switch (status) {
    case 401:
      return "SUBSTRATE_UNAUTHORIZED";
    case 402:
      return "SUBSTRATE_PAYMENT_REQUIRED";
    case 403:
      return "SUBSTRATE_FORBIDDEN";
    case 404:
      return "SUBSTRATE_NOT_FOUND";
    case 408:
      return "SUBSTRATE_TIMEOUT";
    case 409:
      return "SUBSTRATE_CONFLICT";
    case 413:
    case 400:
      return "SUBSTRATE_BAD_REQUEST";
    case 422:
      return "SUBSTRATE_QUOTA";
    case 429:
      return "SUBSTRATE_RATE_LIMITED";
    case 503:
      return "SUBSTRATE_UNAVAILABLE";
    default:
      return status >= 500 ? "SUBSTRATE_INTERNAL" : "SUBSTRATE_BAD_REQUEST";
  }
}
