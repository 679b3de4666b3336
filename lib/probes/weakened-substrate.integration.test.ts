/**
 * Each probe fails against a local substrate deliberately weakened in the way it guards against
 * (the substrate is started with its test-only `allowWeakening` switch): network left open (P2),
 * a host path with a canary bound into the guest (P3), a host fallback injected through the
 * probe-task seam (P4), the TTL ignored (P6), a secret written into the evidence (P7). P5 must
 * still pass with the substrate's own export cap off, every refusal raised by the control plane.
 * The in-guest model endpoint is weakened through the guest-program seam (the module P2 uploads is
 * rewritten): bound to 0.0.0.0 (P2), or logging the relay handle (P7).
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { probeDepsFor } from "../jobs/run-probe-job";
import { createLifecycleWorld, type LifecycleWorld } from "../lifecycle/testing/lifecycle-fixture";
import { executeProbeRun } from "./execute-probe-run";
import type { TProbeId } from "./probe-registry";
import { readEvidence } from "./probe-evidence";
import { getProbeRunOrThrow } from "./probe-run.repo";
import type { TProbeDeps } from "./probe-types";
import { requestProbeRun } from "./request-probe-run";
import { startProbeRelayListener, type TProbeRelayListener } from "./testing/probe-relay-listener";

let world: LifecycleWorld;
let relay: TProbeRelayListener;

beforeAll(async () => {
  world = await createLifecycleWorld({ allowWeakening: true });
  relay = await startProbeRelayListener(world.db);
});

afterAll(async () => {
  await relay?.close();
});

afterEach(async () => {
  await world.substrate.admin("PUT", "/admin/weakening", {});
});

function deps(extra: Partial<TProbeDeps> = {}): TProbeDeps {
  return probeDepsFor(
    { ...world.ctx, env: relay.envFor(world.env) },
    {
      isProviderSpawn: ({ stack }) => stack.includes(`${path.sep}sidecars${path.sep}local-substrate${path.sep}`),
      ...extra,
    },
  );
}

async function runOne(probe: TProbeId, extra: Partial<TProbeDeps> = {}, alsoFirst: TProbeId[] = []) {
  const run = await requestProbeRun(
    { db: world.db, env: world.env },
    { probes: [...alsoFirst, probe], actor: null, isRunByCaller: true },
  );
  const state = await executeProbeRun(deps(extra), { runId: run.id });
  const stored = await getProbeRunOrThrow({ db: world.db }, { runId: run.id });
  const result = stored.results.find((r) => r.probe === probe)!;
  return { state, result, detail: JSON.stringify(result.detail), runId: run.id, evidenceDigest: stored.evidenceDigest };
}

/** A seam that rewrites one guest module, and fails the test when the text to weaken is not there (the weakening must happen). */
function weakenGuestProgram(name: string, from: string, to: string): Pick<TProbeDeps, "tamperGuestProgram"> {
  return {
    tamperGuestProgram(file, source) {
      if (file !== name) return source;
      if (!source.includes(from))
        throw new Error(`${name} no longer contains ${JSON.stringify(from)}: update the weakening`);
      return source.replace(from, to);
    },
  };
}

async function weaken(value: Record<string, unknown>) {
  const answer = await world.substrate.admin("PUT", "/admin/weakening", value);
  expect(answer.status).toBe(200);
}

describe("probes against a weakened local substrate", () => {
  it("the weakening switches do not exist without allowWeakening", async () => {
    const { startTestSubstrate } = await import("../../sidecars/local-substrate/testing/local-substrate-fixture");
    const plain = await startTestSubstrate();
    try {
      expect((await plain.admin("PUT", "/admin/weakening", { networkOpen: true })).status).toBe(404);
    } finally {
      await plain.cleanup();
    }
  });

  it("P2 fails when guests share the host network", async () => {
    await weaken({ networkOpen: true });
    const { state, result, detail } = await runOne("P2");
    expect(state).toBe("failed");
    expect(result.status).toBe("failed");
    expect(detail).toMatch(/connected|answered/);
  }, 60_000);

  it("P3 fails when a host path holding a canary is bound into the guest", async () => {
    await weaken({ hostBinds: [world.env.dataDir] });
    const { result, detail } = await runOne("P3");
    expect(result.status).toBe("failed");
    expect(detail).toMatch(/canary from DATA_DIR visible in the guest at \/host-weakened-0/);
  }, 60_000);

  it("P4 fails when a host fallback runs a command on the host after a guest failure", async () => {
    const base = deps();
    const { result, detail } = await runOne("P4", {
      async runProbeTask(taskId, options) {
        await base.runProbeTask(taskId, options);
        // the injected fallback: the "student command" run on the host instead of a guest
        await new Promise((resolve) => spawn("sh", ["-c", "sleep 0.2"]).once("exit", resolve));
      },
    });
    expect(result.status).toBe("failed");
    expect(detail).toMatch(/host process started during the probe: \S*sh/);
  }, 90_000);

  it("P6 fails when the provider ignores the TTL (and the probe destroys the machine itself)", async () => {
    await weaken({ ttlIgnored: true });
    const { result, detail } = await runOne("P6");
    expect(result.status).toBe("failed");
    expect(detail).toMatch(/still known to the provider/);
    expect(await world.liveAtProvider()).toBe(0);
  }, 60_000);

  it("P7 fails when a secret is written into the evidence", async () => {
    const { result, detail } = await runOne("P7", { tamperEvidence: (doc) => void (doc.leak = world.substrate.token) });
    expect(result.status).toBe("failed");
    expect(detail).toMatch(/known secret/);
  });

  it("P2 fails when the in-guest model endpoint listens on 0.0.0.0", async () => {
    const { result, detail } = await runOne(
      "P2",
      weakenGuestProgram(
        "model-endpoint.mjs",
        "server.listen(port, host, () => {",
        'server.listen(port, "0.0.0.0", () => {',
      ),
    );
    expect(result.status).toBe("failed");
    expect(detail).toMatch(/blocked guest: the model endpoint listens on 0\.0\.0\.0:7800, not on 127\.0\.0\.1 only/);
    expect(detail).toMatch(/relay-channel guest: the model endpoint listens on 0\.0\.0\.0:7800/);
  }, 90_000);

  it("P7 fails when the in-guest model endpoint logs the relay handle (and the evidence still does not carry it)", async () => {
    const logsHandle = weakenGuestProgram(
      "model-endpoint.mjs",
      "  const relayTask = await readRelayTask(taskFile);\n",
      "  const relayTask = await readRelayTask(taskFile);\n  createBoundedLog(LOG_FILE)(`relay ${relayTask.channel} ${relayTask.handle}`);\n",
    );
    const { state, result, detail, evidenceDigest } = await runOne("P7", logsHandle, ["P2"]);
    expect(state).toBe("failed");
    expect(result.status).toBe("failed");
    expect(detail).toMatch(
      /known secret #\d+ appears in P2 blocked guest: the model endpoint's \/tmp\/school-core-output\/model-endpoint\.log/,
    );
    expect(detail).toMatch(
      /appears in P2 relay-channel guest: the model endpoint's \/tmp\/school-core-output\/model-endpoint\.log/,
    );
    // what was leaked stays out of the stored evidence: only digests of the endpoint's writes are recorded
    const evidence = (await readEvidence({ db: world.db, env: world.env }, evidenceDigest!)).toString("utf8");
    expect(evidence).not.toMatch(/scr_[A-Za-z0-9_-]{43}/);
  }, 90_000);

  it("P5 still passes with the substrate's own export cap off: the control plane refuses every case itself", async () => {
    await weaken({ exportCapOff: true });
    const { state, result } = await runOne("P5");
    expect(state, JSON.stringify(result.detail)).toBe("passed");
    const cases = (
      result.detail as {
        cases: {
          label: string;
          refusedBy: string;
          raisedAt: string;
          errorCode: string;
          state: string;
          candidates: number;
        }[];
      }
    ).cases;
    expect(cases).toHaveLength(4);
    for (const c of cases)
      expect([c.label, c.refusedBy, c.state, c.candidates]).toEqual([c.label, "control plane", "failed", 0]);
    // Where it was raised: the control plane's own byte count on the download (collect-task), not
    // a substrate error — and the substrate did serve the whole archive, uncapped and undeclared.
    const oversized = cases.find((c) => c.label === "P5 oversized export");
    expect(oversized?.errorCode).toBe("CONTRACT_VIOLATION:ARCHIVE_TOO_LARGE");
    expect(oversized?.raisedAt).toMatch(/control plane's byte count/);
    const observed = (
      (await world.substrate.admin("GET", "/admin/weakening")).json as {
        observed: { uncappedDownloads: number; largestUncappedBytes: number };
      }
    ).observed;
    expect(observed.uncappedDownloads).toBeGreaterThan(0);
    expect(observed.largestUncappedBytes).toBeGreaterThan(1024 * 1024);
  }, 120_000);
});
