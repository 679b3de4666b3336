import { createElement } from "react";
import { renderToStaticMarkup } from "react-dom/server";
import { describe, expect, it } from "vitest";
import type { TRelayUsageSnapshot } from "@/lib/relay/read-capability-usage";
import { RelayUsage } from "./relay-usage";

const SNAPSHOT: TRelayUsageSnapshot = {
  capabilityId: "c0ffee00-0000-4000-8000-000000000000",
  taskId: "7a5c0000-0000-4000-8000-000000000000",
  allowedOps: ["complete"],
  limits: {
    maxRequests: 20,
    maxBytes: 4_194_304,
    maxRequestBytes: 262_144,
    maxResponseBytes: 262_144,
    deadlineAt: "2026-11-29T11:00:00.000Z",
  },
  usage: { requestCount: 20, bytesUsed: 1_000 },
  isRevoked: true,
  revokedAt: "2026-11-29T10:30:00.000Z",
  revokedReason: "exhausted:requests",
  isExpired: false,
  createdAt: "2026-11-29T10:00:00.000Z",
  calls: {
    total: 23,
    byOutcome: { "ok:scripted": 20, RELAY_QUOTA_EXHAUSTED: 3 },
    upstreams: ["scripted"],
    isRefusalRecordingCapped: false,
  },
  tokens: { input: 12_000, output: 3_400, charged: 15_400, max: 2_000_000, unreportedCalls: 0 },
  modelCostMicros: 0,
  modelReservedMicros: 0,
  prices: { inputMicrosPerMTok: 0, outputMicrosPerMTok: 0 },
  task: {
    capabilities: 1,
    tokens: { input: 12_000, output: 3_400, charged: 15_400, unreportedCalls: 0 },
    modelCostMicros: 0,
  },
};

describe("RelayUsage", () => {
  it("shows counters against limits, the revocation reason and the scripted label", () => {
    const html = renderToStaticMarkup(createElement(RelayUsage, { usage: SNAPSHOT }));
    expect(html).toContain('data-state="revoked"');
    expect(html).toContain("exhausted:requests");
    expect(html).toMatch(/20\s*(<!-- -->)?\s*\/\s*(<!-- -->)?\s*20/);
    expect(html).toContain('aria-valuenow="1000"');
    expect(html).toContain('aria-valuemax="4194304"');
    expect(html).toContain("not a model");
    expect(html).toContain("RELAY_QUOTA_EXHAUSTED");
  });

  it("says when no capability exists and omits the scripted label for a model upstream", () => {
    expect(renderToStaticMarkup(createElement(RelayUsage, { usage: null }))).toContain("No relay capability");
    const html = renderToStaticMarkup(
      createElement(RelayUsage, {
        usage: {
          ...SNAPSHOT,
          isRevoked: false,
          revokedAt: null,
          revokedReason: null,
          calls: { ...SNAPSHOT.calls, byOutcome: { "ok:openai": 2 }, upstreams: ["openai"] },
        },
      }),
    );
    expect(html).toContain('data-state="active"');
    expect(html).not.toContain("not a model");
    expect(html).toContain("answered by openai");
  });

  it("shows tokens of the budget, the model cost and price, unreported calls and the whole task's totals", () => {
    const html = renderToStaticMarkup(
      createElement(RelayUsage, {
        usage: {
          ...SNAPSHOT,
          tokens: { input: 5000, output: 600, charged: 13_600, max: 50_000, unreportedCalls: 1 },
          modelCostMicros: 114_000,
          modelReservedMicros: 750_000,
          prices: { inputMicrosPerMTok: 3_000_000, outputMicrosPerMTok: 15_000_000 },
          task: {
            capabilities: 2,
            tokens: { input: 6000, output: 800, charged: 14_800, unreportedCalls: 1 },
            modelCostMicros: 120_000,
          },
        },
      }),
    ).replace(/<!-- -->/g, "");
    expect(html).toContain('aria-label="Tokens charged (input + output)"');
    expect(html).toContain('aria-valuenow="13600"');
    expect(html).toContain('aria-valuemax="50000"');
    expect(html).toContain("$0.1140");
    expect(html).toContain("$0.7500 budget still reserved");
    expect(html).toContain("at $3.0000 in / $15.0000 out per million");
    expect(html).toMatch(/5,000 input and 600 output tokens; 1 call\(s\) did not report tokens/);
    expect(html).toMatch(
      /All 2 capabilities of this task[^<]*6,000 input and 800 output tokens, 14,800 charged; model cost \$0\.1200/,
    );
  });
});
