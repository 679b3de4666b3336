/**
 * The gate's rule, over the whole matrix: refused with no run, for another digest, after a
 * failed or partial run, production on the local substrate; open otherwise. A stored gate is
 * re-proved against the configuration now and the run that opened it. Legacy `{enabled}` values
 * read as closed.
 */
import { describe, expect, it } from "vitest";
import { DISPATCH_CLOSED, ZDispatchSettingSchema, type TDispatchSetting, type TSubstrateConfig } from "../contract/dispatch-setting";
import { decideDispatchOpen, recheckOpenGate, type TGateRun } from "./dispatch-gate";
import { parseProbeSelection, PROBE_IDS } from "./probe-catalog";
import { scanEvidence } from "./p7-evidence";

const D1 = "a".repeat(64);
const D2 = "b".repeat(64);
const passed = (overrides: Partial<TGateRun> = {}): TGateRun => ({
  id: "11111111-1111-4111-8111-111111111111",
  state: "passed",
  substrate: "local",
  configDigest: D1,
  results: PROBE_IDS.map((probe) => ({ probe, status: "passed" })),
  finishedAt: new Date(),
  ...overrides,
});
const CONFIG: TSubstrateConfig = {
  v: 1,
  substrate: { kind: "local", url: "http://127.0.0.1:7480" },
  guestImage: {},
  verifierImage: {},
  network: { relayChannel: "mailbox", mode: "blocked", relayEndpoint: null },
  limits: {},
  agentCommand: ["x"],
};

describe("decideDispatchOpen", () => {
  it.each([
    ["no run", null, "development", /No completed probe run/],
    ["a run of another digest", passed({ configDigest: D2 }), "development", /another configuration digest/],
    ["a failed run", passed({ state: "failed", results: [{ probe: "P2", status: "failed" }] }), "development", /did not pass: P0, P1, P2/],
    ["a partial passing run", passed({ results: [{ probe: "P0", status: "passed" }] }), "development", /P1, P2, P3, P4, P5, P6, P8, P7/],
    ["production on the local substrate", passed(), "production", /not a VM/],
  ] as const)("refuses with %s", (_label, run, mode, message) => {
    const decision = decideDispatchOpen({ requested: mode, currentDigest: D1, latestRun: run });
    expect(decision.kind).toBe("refused");
    expect(decision.kind === "refused" && decision.reason).toMatch(message);
  });

  it("opens development after a passing local run, production after a passing hosted run", () => {
    expect(decideDispatchOpen({ requested: "development", currentDigest: D1, latestRun: passed() })).toMatchObject({
      kind: "open",
      mode: "development",
    });
    expect(decideDispatchOpen({ requested: "production", currentDigest: D1, latestRun: passed({ substrate: "smolcloud" }) })).toMatchObject(
      { kind: "open", mode: "production" },
    );
  });
});

describe("recheckOpenGate", () => {
  const open: TDispatchSetting = {
    enabled: true,
    mode: "development",
    openedByRunId: passed().id,
    configDigest: D1,
    config: CONFIG,
    closedReason: null,
    changedAt: null,
  };
  it("holds while the digest and the opening run still prove it", () => {
    expect(recheckOpenGate(open, { currentDigest: D1, openingRun: passed() })).toEqual({ kind: "open" });
  });
  it("closes when the configuration changed, or the opening run does not prove it", () => {
    expect(recheckOpenGate(open, { currentDigest: D2, openingRun: passed() })).toMatchObject({
      kind: "closed",
      mustRecord: true,
      reason: expect.stringMatching(/configuration changed/),
    });
    expect(recheckOpenGate(open, { currentDigest: D1, openingRun: null })).toMatchObject({ kind: "closed", mustRecord: true });
    expect(recheckOpenGate({ ...open, mode: "production" }, { currentDigest: D1, openingRun: passed() })).toMatchObject({ kind: "closed" });
  });
});

describe("the stored dispatch value", () => {
  it("reads a legacy {enabled: true} as closed, with the reason", () => {
    expect(ZDispatchSettingSchema.parse({ enabled: true })).toMatchObject({
      enabled: false,
      mode: "off",
      closedReason: expect.stringMatching(/before qualification/),
    });
  });
  it("refuses an open gate that names no run, and enabled disagreeing with the mode", () => {
    expect(ZDispatchSettingSchema.safeParse({ ...DISPATCH_CLOSED, enabled: true, mode: "development" }).success).toBe(false);
    expect(ZDispatchSettingSchema.safeParse({ ...DISPATCH_CLOSED, enabled: true }).success).toBe(false);
  });
});

describe("probe selection and the evidence scan", () => {
  it("parses --only in run order and refuses unknown ids", () => {
    expect(parseProbeSelection("p2,P0")).toEqual(["P0", "P2"]);
    expect(parseProbeSelection(undefined)).toEqual([...PROBE_IDS]);
    expect(() => parseProbeSelection("P9")).toThrow(/Unknown probe/);
  });
  it("finds known secrets and credential shapes", () => {
    expect(scanEvidence('{"a":"fine"}', ["supersecretvalue"])).toEqual([]);
    expect(scanEvidence('{"a":"xx supersecretvalue"}', ["supersecretvalue"])).toHaveLength(1);
    expect(scanEvidence('{"h":"scr_abcdefghijkl"}', [])).toHaveLength(1);
  });
});
