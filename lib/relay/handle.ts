/**
 * Relay handles: 256 random bits, shown once, stored only as a sha256 hash. The `scr_` prefix is
 * what lib/redact.ts recognises, so a handle that reaches a log line by accident is still redacted.
 */
import { createHash, randomBytes } from "node:crypto";

const HANDLE_PREFIX = "scr_";
/** 32 bytes in unpadded base64url are exactly 43 characters. */
const HANDLE_PATTERN = /^scr_[A-Za-z0-9_-]{43}$/;

export function generateHandle(): string {
  return HANDLE_PREFIX + randomBytes(32).toString("base64url");
}

/** Lookup is by this hash; equality on a sha256 of 256 random bits leaks nothing useful through timing. */
export function hashHandle(handle: string): string {
  return createHash("sha256").update(handle, "utf8").digest("hex");
}

/** A malformed handle is refused without touching the database. */
export function isWellFormedHandle(value: unknown): value is string {
  return typeof value === "string" && HANDLE_PATTERN.test(value);
}
