/**
 * Webhook signing: `X-School-Core-Signature: sha256=<hex HMAC-SHA256(secret, "<timestamp>.<body>")>`
 * with the timestamp in `X-School-Core-Timestamp` (Unix seconds). The timestamp is inside the
 * signed content, so a captured request replayed later fails the receiver's freshness check
 * without the receiver trusting an unsigned header. verifyWebhookSignature is what a receiver does
 * (our tests use it; docs show it).
 */
import { createHmac, timingSafeEqual } from "node:crypto";

export const SIGNATURE_HEADER = "x-school-core-signature";
export const TIMESTAMP_HEADER = "x-school-core-timestamp";
export const DELIVERY_HEADER = "x-school-core-delivery";
export const EVENT_HEADER = "x-school-core-event";

/** How old a signed request a receiver should still accept. */
export const WEBHOOK_TOLERANCE_SECONDS = 300;

export function signWebhookBody(options: { secret: string; timestamp: number; body: string }): string {
  const mac = createHmac("sha256", options.secret).update(`${options.timestamp}.${options.body}`, "utf8").digest("hex");
  return `sha256=${mac}`;
}

export type TSignatureCheck = { kind: "valid" } | { kind: "invalid"; reason: "malformed" | "mismatch" | "stale" };

export function verifyWebhookSignature(options: {
  secret: string;
  body: string;
  signature: string | undefined;
  timestamp: string | undefined;
  now: Date;
  toleranceSeconds?: number;
}): TSignatureCheck {
  if (!options.signature || !/^sha256=[0-9a-f]{64}$/.test(options.signature))
    return { kind: "invalid", reason: "malformed" };
  if (!options.timestamp || !/^\d{1,12}$/.test(options.timestamp)) return { kind: "invalid", reason: "malformed" };
  const timestamp = Number(options.timestamp);
  const expected = signWebhookBody({ secret: options.secret, timestamp, body: options.body });
  if (!timingSafeEqual(Buffer.from(expected), Buffer.from(options.signature)))
    return { kind: "invalid", reason: "mismatch" };
  const age = Math.abs(options.now.getTime() / 1000 - timestamp);
  if (age > (options.toleranceSeconds ?? WEBHOOK_TOLERANCE_SECONDS)) return { kind: "invalid", reason: "stale" };
  return { kind: "valid" };
}
