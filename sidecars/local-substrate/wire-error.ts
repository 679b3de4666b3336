/**
 * The SmolCloud error envelope (`{"error","code"}`) as a throwable. These codes are the vendor's
 * wire codes (SMOLCLOUD_API.md), not School-Core's AppError codes: the local substrate must be
 * indistinguishable from the vendor on the wire.
 */
import { boundText } from "../../lib/redact";

export const WIRE_ERROR_CODES = {
  BAD_REQUEST: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  TIMEOUT: 408,
  CONFLICT: 409,
  /** Not in the smolvm envelope list; the hosted cloud answers 413 for an oversized upload. */
  PAYLOAD_TOO_LARGE: 413,
  /** The OpenAPI's "quota exceeded" on create. */
  QUOTA_EXCEEDED: 422,
  INTERNAL_ERROR: 500,
  UNAVAILABLE: 503,
} as const;

export type TWireErrorCode = keyof typeof WIRE_ERROR_CODES;

export class WireError extends Error {
  readonly code: TWireErrorCode;

  constructor(code: TWireErrorCode, message: string) {
    super(boundText(message, 2048));
    this.name = "WireError";
    this.code = code;
  }

  get status(): number {
    return WIRE_ERROR_CODES[this.code];
  }
}

export function wireErrorBody(error: WireError): { error: string; code: TWireErrorCode } {
  return { error: error.message, code: error.code };
}
