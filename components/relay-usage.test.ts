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
});
