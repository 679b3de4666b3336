import { describe, expect, it } from "vitest";
import { checkResponseSize, classifyAdmission, classifyFailedCharge, type TCapabilityState } from "./admission";
import { hashHandle, isWellFormedHandle, generateHandle } from "./handle";
import { ZCompleteRequestSchema } from "./relay-request";

const NOW = new Date("2026-11-29T10:00:00Z");
const TASK = "11111111-1111-4111-8111-111111111111";

function cap(overrides: Partial<TCapabilityState> = {}): TCapabilityState {
  return {
    id: "c",
    taskId: TASK,
    allowedOps: ["complete"],
    maxRequests: 5,
    maxBytes: 1000n,
    maxRequestBytes: 100,
    maxResponseBytes: 200,
    requestCount: 0,
    bytesUsed: 0n,
    maxTokens: 10_000n,
    tokensUsed: 0n,
    inputMicrosPerMTok: 0,
    outputMicrosPerMTok: 0,
    deadlineAt: new Date(NOW.getTime() + 60_000),
    revokedAt: null,
    revokedReason: null,
    dbNow: NOW,
    ...overrides,
  };
}

const VALID = {
  taskId: TASK,
  operation: "complete",
  request: { kind: "valid" as const, bytes: 50, tokenBound: 2_000 },
};

describe("classifyAdmission", () => {
  it.each([
    ["admits a call within every limit", cap(), VALID, { kind: "admit" }],
    [
      "wrong task",
      cap(),
      { ...VALID, taskId: "22222222-2222-4222-8222-222222222222" },
      { code: "RELAY_REFUSED", revokeReason: undefined },
    ],
    ["revoked by the operator", cap({ revokedAt: NOW, revokedReason: "done" }), VALID, { code: "RELAY_REFUSED" }],
    [
      "revoked as exhausted stays a 429",
      cap({ revokedAt: NOW, revokedReason: "exhausted:requests" }),
      VALID,
      { code: "RELAY_QUOTA_EXHAUSTED", revokeReason: undefined },
    ],
    [
      "expired → revoke as expired",
      cap({ deadlineAt: NOW }),
      VALID,
      { code: "RELAY_REFUSED", revokeReason: "expired" },
    ],
    ["operation not allowed", cap(), { ...VALID, operation: "unknown" }, { code: "RELAY_OPERATION_NOT_ALLOWED" }],
    [
      "malformed request",
      cap(),
      { ...VALID, request: { kind: "malformed" as const, message: "x" } },
      { code: "RELAY_REQUEST_MALFORMED" },
    ],
    [
      "request over its cap",
      cap(),
      { ...VALID, request: { kind: "valid" as const, bytes: 101, tokenBound: 2_000 } },
      { code: "RELAY_TOO_LARGE", revokeReason: undefined },
    ],
    [
      "request count exhausted → revoke",
      cap({ requestCount: 5 }),
      VALID,
      { code: "RELAY_QUOTA_EXHAUSTED", revokeReason: "exhausted:requests" },
    ],
    [
      "byte budget cannot hold the request → revoke",
      cap({ bytesUsed: 951n }),
      VALID,
      { code: "RELAY_QUOTA_EXHAUSTED", revokeReason: "exhausted:bytes" },
    ],
    ["byte budget exactly full is still admitted", cap({ bytesUsed: 950n }), VALID, { kind: "admit" }],
    [
      "token budget cannot hold the worst case → refused, not revoked (a smaller call may fit)",
      cap({ tokensUsed: 8_001n }),
      VALID,
      { code: "RELAY_TOKENS_EXHAUSTED" },
    ],
    ["token budget holding the worst case exactly is admitted", cap({ tokensUsed: 8_000n }), VALID, { kind: "admit" }],
  ])("%s", (_label, state, call, expected) => {
    const decision = classifyAdmission(state, call);
    if ("kind" in expected) expect(decision).toEqual(expected);
    else expect(decision).toMatchObject({ kind: "refuse", refusal: expected });
  });

  it("reports the binding before anything else (a foreign, revoked, expired handle is 'another task')", () => {
    const decision = classifyAdmission(cap({ revokedAt: NOW, deadlineAt: NOW }), {
      ...VALID,
      taskId: "22222222-2222-4222-8222-222222222222",
    });
    expect(decision).toMatchObject({ refusal: { message: expect.stringMatching(/another task/) } });
  });
});

describe("response checks", () => {
  it("refuses a response over the per-response cap whole", () => {
    expect(checkResponseSize(cap(), 200)).toBeNull();
    expect(checkResponseSize(cap(), 201)).toMatchObject({ code: "RELAY_TOO_LARGE" });
  });

  it("a failed charge on an operator-revoked capability withholds; otherwise it is exhaustion", () => {
    const withheld = classifyFailedCharge(cap({ revokedAt: NOW, revokedReason: "task blocked" }), 10);
    expect(withheld.code).toBe("RELAY_REFUSED");
    expect(withheld.revokeReason).toBeUndefined();
    expect(classifyFailedCharge(cap({ revokedAt: NOW, revokedReason: "exhausted:requests" }), 10)).toMatchObject({
      code: "RELAY_QUOTA_EXHAUSTED",
      revokeReason: "exhausted:bytes",
    });
    expect(classifyFailedCharge(cap(), 10)).toMatchObject({
      code: "RELAY_QUOTA_EXHAUSTED",
      revokeReason: "exhausted:bytes",
    });
    expect(classifyFailedCharge(cap({ deadlineAt: NOW }), 10)).toMatchObject({
      code: "RELAY_REFUSED",
      revokeReason: "expired",
    });
  });
});

describe("handles", () => {
  it("are 256 random bits with the scr_ prefix and hash deterministically", () => {
    const a = generateHandle();
    const b = generateHandle();
    expect(a).not.toBe(b);
    expect(isWellFormedHandle(a)).toBe(true);
    expect(Buffer.from(a.slice(4), "base64url")).toHaveLength(32);
    expect(hashHandle(a)).toMatch(/^[a-f0-9]{64}$/);
    expect(hashHandle(a)).toBe(hashHandle(a));
    for (const bad of [
      "scr_",
      `scr_${"a".repeat(42)}`,
      `scr_${"a".repeat(44)}`,
      `SCR_${"a".repeat(43)}`,
      `scr_${"a".repeat(42)}!`,
      null,
    ])
      expect(isWellFormedHandle(bad)).toBe(false);
  });
});

describe("the complete request surface carries no steering field", () => {
  it.each(["url", "endpoint", "method", "headers", "header", "model", "baseUrl", "upstream", "apiKey"])(
    "refuses %s at the top level and on a message",
    (field) => {
      expect(
        ZCompleteRequestSchema.safeParse({ messages: [{ role: "user", content: "x" }], [field]: "x" }).success,
      ).toBe(false);
      expect(
        ZCompleteRequestSchema.safeParse({ messages: [{ role: "user", content: "x", [field]: "x" }] }).success,
      ).toBe(false);
    },
  );
  it("accepts exactly messages and maxTokens", () => {
    expect(
      ZCompleteRequestSchema.safeParse({
        messages: [
          { role: "system", content: "s" },
          { role: "user", content: "u" },
          { role: "assistant", content: "a" },
        ],
        maxTokens: 10,
      }).success,
    ).toBe(true);
  });
});
