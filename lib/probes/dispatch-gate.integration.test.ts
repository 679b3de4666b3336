/**
 * The dispatch gate follows the newest evidence (issue 27, item 3), on real PostgreSQL: a later
 * failing run for the digest that opened the gate closes it; the probe external targets are a
 * digest input; production on a hosted substrate needs P2 to have probed external targets. Probe
 * runs are recorded rows here (the probes themselves are proved in run-probes.integration.test.ts);
 * the hosted URL points at a closed loopback port and is never called; the limits-mode test starts
 * (and stops, and restarts) a real local substrate, whose account reports how it enforces limits.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../db/client";
import { parseEnv, type TEnv } from "../env";
import { readSettingVersion, writeSetting } from "../settings/operator-settings";
import { readSubstrateConfig } from "../settings/substrate-config";
import { createTestDatabase } from "../testing/test-database";
import { findFreePort } from "../testing/free-port";
import {
  startTestSubstrate,
  type TTestSubstrate,
} from "../../sidecars/local-substrate/testing/local-substrate-fixture";
import { PROBE_IDS } from "./probe-registry";
import { readDispatchGate } from "./read-dispatch-gate";
import { requestProbeRun } from "./request-probe-run";
import { setDispatch } from "./set-dispatch";
import { substrateEndpointPart } from "./substrate-endpoint-part";

let db: Db;
let dataDir: string;
let localEnv: TEnv;
let hostedEnv: TEnv;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-gate-"));
  localEnv = parseEnv({ DATA_DIR: dataDir, NODE_ENV: "test", LOCAL_SUBSTRATE_PORT: "9" });
  hostedEnv = parseEnv({ DATA_DIR: dataDir, NODE_ENV: "test", SMOLCLOUD_URL: "http://127.0.0.1:9" });
});

afterAll(async () => {
  await fs.rm(dataDir, { recursive: true, force: true });
});

/** A completed run for the configuration in force now: every probe passed, or P2 failed. */
async function recordRun(env: TEnv, outcome: "passed" | "failed"): Promise<string> {
  const run = await requestProbeRun({ db, env }, { probes: [...PROBE_IDS], actor: null, isRunByCaller: true });
  const now = new Date();
  await db.probeResult.updateMany({
    where: { runId: run.id },
    data: {
      status: "passed",
      durationMs: 0,
      detail: { fixture: "dispatch-gate test" },
      startedAt: now,
      finishedAt: now,
    },
  });
  if (outcome === "failed")
    await db.probeResult.updateMany({ where: { runId: run.id, probe: "P2" }, data: { status: "failed" } });
  await db.probeRun.update({
    where: { id: run.id },
    data: {
      state: outcome,
      startedAt: now,
      finishedAt: now,
      evidenceDigest: "0".repeat(64),
      reason: outcome === "passed" ? null : "not passed: P2 failed",
    },
  });
  return run.id;
}

describe("the gate reads the latest completed run for its digest", () => {
  it("a passing run opens the gate; a later failing run for the same digest closes it, recorded and audited", async () => {
    const passing = await recordRun(localEnv, "passed");
    const opened = await setDispatch({ db, env: localEnv }, { mode: "development", actor: null, via: "test" });
    expect(opened).toMatchObject({ isOpen: true, openedByRunId: passing });

    const failing = await recordRun(localEnv, "failed");
    const gate = await readDispatchGate({ db, env: localEnv });
    expect(gate).toMatchObject({ isOpen: false, mode: "off" });
    expect(gate.closedReason).toContain(failing);
    const audit = await db.auditLog.findFirst({ where: { action: "dispatch.close" }, orderBy: { id: "desc" } });
    expect(audit?.detail).toMatchObject({ reason: expect.stringContaining(failing) });
    // and it cannot be turned on again on the strength of the earlier pass
    await expect(
      setDispatch({ db, env: localEnv }, { mode: "development", actor: null, via: "test" }),
    ).rejects.toMatchObject({
      code: "DISPATCH_NOT_QUALIFIED",
    });
    // a newer passing run qualifies the digest again
    await recordRun(localEnv, "passed");
    expect(await setDispatch({ db, env: localEnv }, { mode: "development", actor: null, via: "test" })).toMatchObject({
      isOpen: true,
    });
  });
});

describe("the probe external targets are a digest input", () => {
  it("changing probe.externalTargets changes the digest and closes an open gate", async () => {
    expect((await readDispatchGate({ db, env: localEnv })).isOpen).toBe(true);
    const dispatchVersion = await readSettingVersion({ db }, { key: "dispatch" });
    const before = await readSubstrateConfig(db, await substrateEndpointPart(localEnv));
    await writeSetting(
      { db },
      {
        key: "probe.externalTargets",
        value: { targets: [{ label: "metadata", host: "169.254.169.254", port: 80, protocol: "tcp" }] },
        actor: null,
        reason: "test setup",
      },
    );
    const after = await readSubstrateConfig(db, await substrateEndpointPart(localEnv));
    expect(after.digest).not.toBe(before.digest);
    // The settings store knows nothing of dispatch: the write leaves the gate's row alone …
    expect(await readSettingVersion({ db }, { key: "dispatch" })).toBe(dispatchVersion);
    // … and the gate, re-proved at its next read, closes on the digest it was not opened for, naming the setting.
    const gate = await readDispatchGate({ db, env: localEnv });
    expect(gate).toMatchObject({ isOpen: false, mode: "off" });
    expect(gate.closedReason).toMatch(/^Setting "probe\.externalTargets" changed: /);
    expect(await readSettingVersion({ db }, { key: "dispatch" })).toBe(dispatchVersion + 1);
    const audit = await db.auditLog.findFirst({ where: { action: "dispatch.close" }, orderBy: { id: "desc" } });
    expect(audit?.detail).toMatchObject({ cause: "probe.externalTargets", reason: gate.closedReason });
  });
});

describe("production dispatch on a hosted substrate", () => {
  it("is refused while the external targets are empty, and opens once P2 probed them", async () => {
    await writeSetting(
      { db },
      {
        key: "probe.externalTargets",
        value: { targets: [] },
        actor: null,
        reason: "test setup",
      },
    );
    await recordRun(hostedEnv, "passed");
    await expect(
      setDispatch({ db, env: hostedEnv }, { mode: "production", actor: null, via: "test" }),
    ).rejects.toMatchObject({
      code: "DISPATCH_EXTERNAL_TARGETS_MISSING",
      message: expect.stringMatching(/probe\.externalTargets/),
    });
    expect((await readDispatchGate({ db, env: hostedEnv })).isOpen).toBe(false);

    // A documentation address (TEST-NET-1): stored only, never contacted here.
    await writeSetting(
      { db },
      {
        key: "probe.externalTargets",
        value: { targets: [{ label: "public", host: "192.0.2.1", port: 443, protocol: "tcp" }] },
        actor: null,
        reason: "test setup",
      },
    );
    await recordRun(hostedEnv, "passed");
    expect(await setDispatch({ db, env: hostedEnv }, { mode: "production", actor: null, via: "test" })).toMatchObject({
      isOpen: true,
      mode: "production",
    });
  });
});

describe("the substrate's limits mode is a digest input", () => {
  it("qualifying without it and then reading it closes the gate; an unreadable mode pauses dispatch without closing the gate", async () => {
    const port = await findFreePort();
    const tokenFile = path.join(dataDir, "limits-mode-token");
    await fs.writeFile(tokenFile, "not-started-yet-token", { mode: 0o600 });
    const env = parseEnv({
      DATA_DIR: dataDir,
      NODE_ENV: "test",
      LOCAL_SUBSTRATE_PORT: String(port),
      SMOLCLOUD_TOKEN_FILE: tokenFile,
    });
    const startOnPort = async (): Promise<TTestSubstrate> => {
      const substrate = await startTestSubstrate({ port });
      await fs.writeFile(tokenFile, substrate.token, { mode: 0o600 });
      return substrate;
    };

    // Qualified while nothing answered on the port: the recorded configuration says the mode was not read.
    await writeSetting(
      { db },
      {
        key: "probe.externalTargets",
        value: { targets: [] },
        actor: null,
        reason: "test setup",
      },
    );
    await recordRun(env, "passed");
    expect(await setDispatch({ db, env }, { mode: "development", actor: null, via: "test" })).toMatchObject({
      isOpen: true,
    });

    let substrate = await startOnPort();
    try {
      const health = (await substrate.admin("GET", "/admin/health")).json as { limitsMode: unknown };
      const part = await substrateEndpointPart(env);
      expect(part.substrate.limitsMode).toEqual(health.limitsMode);
      expect(part.isLimitsModeUnreadable).toBe(false);
      // The substrate now reports how it enforces limits: that is not what was qualified.
      const closed = await readDispatchGate({ db, env });
      expect(closed).toMatchObject({ isOpen: false, mode: "off" });
      expect(closed.closedReason).toMatch(/^The substrate's limits mode changed \(now pids (cgroup|rlimit), memory /);

      // Qualified with the mode: open, and the gate's configuration records it.
      await recordRun(env, "passed");
      const opened = await setDispatch({ db, env }, { mode: "development", actor: null, via: "test" });
      expect(opened.isOpen).toBe(true);
      expect(opened.config?.substrate.limitsMode).toEqual(health.limitsMode);
    } finally {
      await substrate.stop();
    }

    // The substrate is down: the mode cannot be read, so nothing dispatches — but the qualification stands.
    const version = await readSettingVersion({ db }, { key: "dispatch" });
    const paused = await readDispatchGate({ db, env });
    expect(paused).toMatchObject({ isOpen: false, mode: "development" });
    expect(paused.closedReason).toMatch(/limits mode could not be read/);
    expect(await readSettingVersion({ db }, { key: "dispatch" })).toBe(version);

    // Back on the same port with the same enforcement: open again, with no new probe run.
    substrate = await startOnPort();
    try {
      expect(await readDispatchGate({ db, env })).toMatchObject({ isOpen: true, mode: "development" });
    } finally {
      await substrate.stop();
    }
  });
});
