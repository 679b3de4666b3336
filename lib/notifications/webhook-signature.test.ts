import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import { signWebhookBody, verifyWebhookSignature } from "./webhook-signature";

describe("webhook signature", () => {
  const secret = "whsec_test-secret-of-enough-length";
  const body = JSON.stringify({
    v: 1,
    event: "review_pending",
    taskId: "t",
    url: "https://x/",
    occurredAt: "2026-01-01T00:00:00.000Z",
  });
  const timestamp = 1_767_225_600;
  const now = new Date(timestamp * 1000);

  it("is sha256= and the hex HMAC-SHA256 of '<timestamp>.<body>' under the secret", () => {
    const expected = createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");
    expect(signWebhookBody({ secret, timestamp, body })).toBe(`sha256=${expected}`);
  });

  it("verifies a signature made with the same secret, body and timestamp", () => {
    const signature = signWebhookBody({ secret, timestamp, body });
    expect(verifyWebhookSignature({ secret, body, signature, timestamp: String(timestamp), now })).toEqual({
      kind: "valid",
    });
  });

  it("refuses another secret, an altered body, or a timestamp changed after signing", () => {
    const signature = signWebhookBody({ secret, timestamp, body });
    const check = (over: Partial<Parameters<typeof verifyWebhookSignature>[0]>) =>
      verifyWebhookSignature({ secret, body, signature, timestamp: String(timestamp), now, ...over });
    expect(check({ secret: `${secret}x` })).toEqual({ kind: "invalid", reason: "mismatch" });
    expect(check({ body: body.replace("review_pending", "pr_open") })).toEqual({ kind: "invalid", reason: "mismatch" });
    expect(check({ timestamp: String(timestamp + 1000), now: new Date((timestamp + 1000) * 1000) })).toEqual({
      kind: "invalid",
      reason: "mismatch",
    });
  });

  it("refuses a replay older than the tolerance, even with a valid signature", () => {
    const signature = signWebhookBody({ secret, timestamp, body });
    const later = new Date((timestamp + 301) * 1000);
    expect(verifyWebhookSignature({ secret, body, signature, timestamp: String(timestamp), now: later })).toEqual({
      kind: "invalid",
      reason: "stale",
    });
  });

  it("refuses missing or malformed headers without comparing", () => {
    for (const signature of [undefined, "", "sha1=abc", `sha256=${"g".repeat(64)}`, `sha256=${"a".repeat(63)}`])
      expect(verifyWebhookSignature({ secret, body, signature, timestamp: String(timestamp), now })).toEqual({
        kind: "invalid",
        reason: "malformed",
      });
    const signature = signWebhookBody({ secret, timestamp, body });
    for (const ts of [undefined, "", "12a", "-5"])
      expect(verifyWebhookSignature({ secret, body, signature, timestamp: ts, now })).toEqual({
        kind: "invalid",
        reason: "malformed",
      });
  });
});
