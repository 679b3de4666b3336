/**
 * The gate's rule, over the whole matrix: refused with no run, for another digest, after a
 * failed or partial run, production on the local substrate, production on a hosted substrate
 * whose P2 probed no external target; open otherwise. A stored gate is re-proved against the
 * configuration now and the latest completed run for its digest (a later failing run closes it).
 * A task's limits snapshot is held to the qualified limits. Legacy `{enabled}` values read as
 * closed.
 */
import { describe, expect, it } from "vitest";
import {
  DISPATCH_CLOSED,
  ZDispatchSettingSchema,
  type TDispatchSetting,
  type TSubstrateConfig,
} from "../contract/dispatch-setting";
import { DEFAULT_TASK_LIMITS, ZTaskLimitsSchema, type TTaskLimits } from "../contract/limits";
import {
  decideDispatchOpen,
  findUnqualifiedLimits,
  recheckOpenGate,
  RELAY_LIMIT_CEILINGS,
  TASK_LIMIT_CEILINGS,
  type TGateRun,
} from "./dispatch-gate";
import { parseProbeSelection, PROBE_IDS } from "./probe-registry";
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
    [
      "a failed run",
      passed({ state: "failed", results: [{ probe: "P2", status: "failed" }] }),
      "development",
      /did not pass: P0, P1, P2/,
    ],
    [
      "a partial passing run",
      passed({ results: [{ probe: "P0", status: "passed" }] }),
      "development",
      /P1, P2, P3, P4, P5, P6, P8, P7/,
    ],
    ["production on the local substrate", passed(), "production", /not a VM/],
  ] as const)("refuses with %s", (_label, run, mode, message) => {
    const decision = decideDispatchOpen({ requested: mode, currentDigest: D1, latestRun: run, externalTargetCount: 1 });
    expect(decision.kind).toBe("refused");
    expect(decision.kind === "refused" && decision.reason).toMatch(message);
  });

  it("opens development after a passing local run, production after a passing hosted run that probed external targets", () => {
    expect(
      decideDispatchOpen({ requested: "development", currentDigest: D1, latestRun: passed(), externalTargetCount: 0 }),
    ).toMatchObject({
      kind: "open",
      mode: "development",
    });
    expect(
      decideDispatchOpen({
        requested: "production",
        currentDigest: D1,
        latestRun: passed({ substrate: "smolcloud" }),
        externalTargetCount: 2,
      }),
    ).toMatchObject({ kind: "open", mode: "production" });
  });

  it("refuses production on a hosted substrate whose P2 probed no external target (DISPATCH_EXTERNAL_TARGETS_MISSING)", () => {
    const hosted = passed({ substrate: "smolcloud" });
    expect(
      decideDispatchOpen({ requested: "production", currentDigest: D1, latestRun: hosted, externalTargetCount: 0 }),
    ).toMatchObject({
      kind: "refused",
      code: "DISPATCH_EXTERNAL_TARGETS_MISSING",
      reason: expect.stringMatching(/probe\.externalTargets/),
    });
    // development on the same run is not held to it: the targets are a production promise
    expect(
      decideDispatchOpen({ requested: "development", currentDigest: D1, latestRun: hosted, externalTargetCount: 0 }),
    ).toMatchObject({
      kind: "open",
    });
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
  it("holds while the digest and the latest completed run for it still prove it", () => {
    expect(recheckOpenGate(open, { currentDigest: D1, currentConfig: CONFIG, latestRun: passed() })).toEqual({
      kind: "open",
    });
    // a later passing run for the same digest proves it as well as the opening one
    expect(
      recheckOpenGate(open, {
        currentDigest: D1,
        currentConfig: CONFIG,
        latestRun: passed({ id: "22222222-2222-4222-8222-222222222222" }),
      }),
    ).toEqual({
      kind: "open",
    });
  });
  it("closes when the configuration changed, or the latest completed run does not prove it", () => {
    expect(recheckOpenGate(open, { currentDigest: D2, currentConfig: CONFIG, latestRun: passed() })).toMatchObject({
      kind: "closed",
      mustRecord: true,
      reason: expect.stringMatching(/configuration changed/),
    });
    expect(recheckOpenGate(open, { currentDigest: D1, currentConfig: CONFIG, latestRun: null })).toMatchObject({
      kind: "closed",
      mustRecord: true,
    });
  });
  it("names the settings (by the parts their definitions decide) or the environment that changed the digest", () => {
    const changed = { ...CONFIG, guestImage: { type: "smolmachine", reference: "other" }, limits: { cpus: 4 } };
    expect(recheckOpenGate(open, { currentDigest: D2, currentConfig: changed, latestRun: passed() })).toMatchObject({
      kind: "closed",
      changedSettings: ["task.limits", "guest.image"],
      reason: expect.stringMatching(
        /^Settings "task\.limits", "guest\.image" changed: the substrate configuration digest is now b{12}…/,
      ),
    });
    const moved = { ...CONFIG, substrate: { kind: "smolcloud" as const, url: "https://api.example" } };
    expect(recheckOpenGate(open, { currentDigest: D2, currentConfig: moved, latestRun: passed() })).toMatchObject({
      changedSettings: [],
      reason: expect.stringMatching(/^The substrate endpoint changed: /),
    });
    // the relay channel is task.limits' (it decides `network`), the relay endpoint the environment's
    const http = {
      ...CONFIG,
      network: { relayChannel: "http" as const, mode: "allowCidrs" as const, relayEndpoint: "http://127.0.0.1:3100" },
    };
    expect(recheckOpenGate(open, { currentDigest: D2, currentConfig: http, latestRun: passed() })).toMatchObject({
      reason: expect.stringMatching(/^The substrate endpoint changed: /),
    });
    expect(
      recheckOpenGate(
        { ...open, mode: "production" },
        { currentDigest: D1, currentConfig: CONFIG, latestRun: passed() },
      ),
    ).toMatchObject({ kind: "closed" });
  });
  it("closes when a later run for the same digest failed, even though the opening run passed", () => {
    const later = passed({
      id: "33333333-3333-4333-8333-333333333333",
      state: "failed",
      results: [{ probe: "P2", status: "failed" }],
    });
    expect(recheckOpenGate(open, { currentDigest: D1, currentConfig: CONFIG, latestRun: later })).toMatchObject({
      kind: "closed",
      mustRecord: true,
      reason: expect.stringMatching(/33333333-3333-4333-8333-333333333333.*did not pass/),
    });
  });
});

describe("findUnqualifiedLimits", () => {
  const qualified = { ...DEFAULT_TASK_LIMITS, memoryMb: 512 };
  const maxima = { wallClockSeconds: 1800, cpus: 2, memoryMb: 2048, diskGb: 4 };
  it("accepts the qualified limits, stricter ones, and per-task overrides within the qualified maxima", () => {
    expect(findUnqualifiedLimits(qualified, { qualified, overrideMaxima: maxima })).toEqual([]);
    expect(
      findUnqualifiedLimits({ ...qualified, memoryMb: 256, maxProcesses: 64 }, { qualified, overrideMaxima: maxima }),
    ).toEqual([]);
    expect(
      findUnqualifiedLimits({ ...qualified, memoryMb: 2048, cpus: 2 }, { qualified, overrideMaxima: maxima }),
    ).toEqual([]);
  });
  it.each([
    ["memoryMb", { memoryMb: 4096 }],
    ["cpus", { cpus: 4 }],
    ["wallClockSeconds", { wallClockSeconds: 3600 }],
    ["diskGb", { diskGb: 8 }],
    ["maxProcesses", { maxProcesses: 1024 }],
    ["maxExecOutputBytes", { maxExecOutputBytes: 2 * 1024 * 1024 }],
    ["maxUploadBytes", { maxUploadBytes: 100 * 1024 * 1024 }],
    ["relay.maxBytes", { relay: { ...DEFAULT_TASK_LIMITS.relay, maxBytes: 8 * 1024 * 1024 } }],
    ["relayChannel", { relayChannel: "http" }],
  ] as const)("names %s when the task's snapshot is weaker than the qualified configuration", (field, change) => {
    const strictQualified = { ...qualified, maxUploadBytes: 10 * 1024 * 1024, maxExecOutputBytes: 1024 * 1024 };
    const task = { ...strictQualified, ...change } as TTaskLimits;
    expect(
      findUnqualifiedLimits(task, { qualified: strictQualified, overrideMaxima: maxima }).map((f) => f.field),
    ).toEqual([field]);
  });
  it("compares every limit a task carries (a new limit must be placed here, or it would go unchecked)", () => {
    const compared = new Set<string>([...TASK_LIMIT_CEILINGS, "relay", "relayChannel", "v"]);
    expect(Object.keys(ZTaskLimitsSchema.shape).filter((key) => !compared.has(key))).toEqual([]);
    expect(Object.keys(ZTaskLimitsSchema.shape.relay.unwrap().shape).sort()).toEqual([...RELAY_LIMIT_CEILINGS].sort());
  });
  it("treats unreadable qualified limits as qualifying nothing (fail closed)", () => {
    expect(
      findUnqualifiedLimits(qualified, { qualified: undefined, overrideMaxima: maxima }).map((f) => f.field),
    ).toEqual(["limits"]);
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
    expect(ZDispatchSettingSchema.safeParse({ ...DISPATCH_CLOSED, enabled: true, mode: "development" }).success).toBe(
      false,
    );
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
