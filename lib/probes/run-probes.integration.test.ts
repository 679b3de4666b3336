/**
 * Qualification on the real local substrate (bubblewrap guests, real git, real PostgreSQL): all
 * eight probes pass and store bounded, sanitized, content-addressed evidence; the dispatch gate
 * follows the evidence (the matrix below); a run whose runner is SIGKILLed never shows "passed".
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canonicalDigest } from "../canonical-json";
import { createLifecycleWorld, type LifecycleWorld } from "../lifecycle/testing/lifecycle-fixture";
import { startWorkerProcess } from "../lifecycle/testing/worker-process";
import { probeDepsFor } from "../jobs/run-probe-job";
import { writeSetting } from "../settings/operator-settings";
import { executeProbeRun } from "./execute-probe-run";
import { PROBE_IDS } from "./probe-registry";
import { readEvidence } from "./probe-evidence";
import { failAbandonedProbeRuns, getProbeRunOrThrow } from "./probe-run.repo";
import { readDispatchGate } from "./read-dispatch-gate";
import { requestProbeRun } from "./request-probe-run";
import { setDispatch } from "./set-dispatch";
import { startProbeRelayListener, type TProbeRelayListener } from "./testing/probe-relay-listener";
import { RUN_HEARTBEAT_STALE_MS } from "../runs/run-states";

let world: LifecycleWorld;
// P2 checks the guest's relay route against the real relay listener, always: one runs for the file.
let relay: TProbeRelayListener;

beforeAll(async () => {
  world = await createLifecycleWorld();
  relay = await startProbeRelayListener(world.db);
  await setDispatch({ db: world.db, env: world.env }, { mode: "off", actor: null, via: "test" });
});

afterAll(async () => {
  await relay?.close();
});

export function probeDepsForWorld(w: LifecycleWorld, listener: TProbeRelayListener = relay) {
  return probeDepsFor(
    { ...w.ctx, env: listener.envFor(w.env) },
    {
      // the in-process local substrate stands in for the provider's hypervisor: its bubblewrap spawns are the provider's
      isProviderSpawn: ({ stack }) => stack.includes(`${path.sep}sidecars${path.sep}local-substrate${path.sep}`),
      extraEgressTargets: [
        { label: "test database", host: "127.0.0.1", port: Number(new URL(w.databaseUrl).port), protocol: "tcp" },
      ],
    },
  );
}

async function runProbes(probes: string[] = [...PROBE_IDS]) {
  const run = await requestProbeRun(
    { db: world.db, env: world.env },
    { probes: probes as never, actor: null, isRunByCaller: true },
  );
  const started = Date.now();
  const state = await executeProbeRun(probeDepsForWorld(world), { runId: run.id });
  return {
    runId: run.id,
    state,
    ms: Date.now() - started,
    run: await getProbeRunOrThrow({ db: world.db }, { runId: run.id }),
  };
}

async function expectRefused(mode: "development" | "production", pattern: RegExp) {
  await expect(setDispatch({ db: world.db, env: world.env }, { mode, actor: null, via: "test" })).rejects.toMatchObject(
    {
      code: "DISPATCH_NOT_QUALIFIED",
      message: expect.stringMatching(pattern),
    },
  );
}

describe("the dispatch gate before any run", () => {
  it("is refused before any run, naming what is missing", async () => {
    await expectRefused("development", /No completed probe run/);
    expect((await readDispatchGate({ db: world.db, env: world.env })).isOpen).toBe(false);
  });
});

describe("a full probe run on the local substrate", () => {
  let result: Awaited<ReturnType<typeof runProbes>>;

  it("passes P0–P7 well under a minute, recording status, duration and detail per probe", async () => {
    result = await runProbes();
    const summary = result.run.results.map(
      (r) =>
        `${r.probe}:${r.status}:${r.durationMs}ms${r.status === "passed" ? "" : ` ${JSON.stringify(r.detail).slice(0, 600)}`}`,
    );
    console.log(`probe run took ${result.ms} ms: ${summary.join(" | ")}`);
    expect(result.state, summary.join("\n")).toBe("passed");
    expect(result.run.results.map((r) => r.status)).toEqual(PROBE_IDS.map(() => "passed"));
    expect(result.ms).toBeLessThan(60_000);
  }, 180_000);

  it("stores canonical evidence as a content-addressed artifact bound to the configuration digest, with no secret in it", async () => {
    const bytes = await readEvidence({ db: world.db, env: world.env }, result.run.evidenceDigest!);
    expect(bytes.length).toBeLessThanOrEqual(256 * 1024);
    const doc = JSON.parse(bytes.toString("utf8"));
    expect(canonicalDigest(doc)).toBe(result.run.evidenceDigest);
    expect(doc).toMatchObject({
      runId: result.runId,
      configDigest: result.run.configDigest,
      substrate: "local",
      isVm: false,
    });
    expect(bytes.toString("utf8")).not.toContain(world.substrate.token);
    // P1 recorded the lifecycle identities
    const p1 = doc.probes.find((p: { id: string }) => p.id === "P1");
    expect(p1.detail.candidate.headSha).toMatch(/^[0-9a-f]{40}$/);
    expect(p1.detail.manifestDigest).toBeTruthy();
    // P2 ran the model endpoint in both its guests, on loopback only; P7 scanned what it wrote there
    const p2 = doc.probes.find((p: { id: string }) => p.id === "P2");
    expect(p2.detail.modelEndpoint.listening).toEqual(["127.0.0.1:7800"]);
    expect(p2.detail.relay.modelEndpoint.listening).toEqual(["127.0.0.1:7800"]);
    const p7 = doc.probes.find((p: { id: string }) => p.id === "P7");
    expect(p7.detail.modelEndpointWrites).toMatchObject({ scanned: 5 });
    // probe tasks are closed, hidden and published nothing
    const tasks = await world.db.task.findMany({ where: { probeRunId: result.runId } });
    expect(tasks.length).toBeGreaterThan(0);
    expect(tasks.every((t) => ["rejected", "failed", "blocked"].includes(t.state))).toBe(true);
    expect(await world.liveAtProvider()).toBe(0);
  });

  it("opens development dispatch only; production is refused on the local substrate", async () => {
    await expectRefused("production", /not a VM/);
    const gate = await setDispatch({ db: world.db, env: world.env }, { mode: "development", actor: null, via: "test" });
    expect(gate).toMatchObject({
      isOpen: true,
      enabled: true,
      mode: "development",
      openedByRunId: result.runId,
      configDigest: result.run.configDigest,
    });
  });

  it("closes at once when the guest image changes, with the reason recorded", async () => {
    await writeSetting(
      { db: world.db },
      {
        key: "guest.image",
        value: { type: "smolmachine", reference: "school-core/other" },
        actor: null,
        reason: "test setup",
      },
    );
    const gate = await readDispatchGate({ db: world.db, env: world.env });
    expect(gate).toMatchObject({ isOpen: false, mode: "off" });
    expect(gate.closedReason).toMatch(/guest\.image.*changed/);
    const audit = await world.db.auditLog.findFirst({ where: { action: "dispatch.close" }, orderBy: { id: "desc" } });
    expect(audit?.detail).toMatchObject({ cause: "guest.image" });
    // a run of another digest does not count for this one
    await expectRefused("development", /No completed probe run/);
  });

  it("stays closed for a run of another digest, and after a failed run", async () => {
    const image = (await world.db.operatorSetting.findUniqueOrThrow({ where: { key: "guest.image" } })).value;
    expect(image).toMatchObject({ reference: "school-core/other" });
    // P0 alone against an image that does not exist: a completed, failed run for this digest
    const failed = await runProbes(["P0", "P6"]);
    expect(failed.state).toBe("failed");
    await expectRefused("development", /did not pass/);
  }, 60_000);
});

describe("a probe run whose runner is killed", () => {
  it("never shows passed: the sweep fails it, its probes end as error", async () => {
    await writeSetting(
      { db: world.db },
      {
        key: "guest.image",
        value: { type: "smolmachine", reference: "school-core/node24" },
        actor: null,
        reason: "test setup",
      },
    );
    const run = await requestProbeRun(
      { db: world.db, env: world.env },
      { probes: ["P6"], actor: null, isRunByCaller: true },
    );
    const worker = startWorkerProcess({ world });
    const deadline = Date.now() + 60_000;
    while (
      (await world.db.probeRun.findUniqueOrThrow({ where: { id: run.id } })).state === "queued" &&
      Date.now() < deadline
    )
      await new Promise((r) => setTimeout(r, 200));
    expect((await world.db.probeRun.findUniqueOrThrow({ where: { id: run.id } })).state).toBe("running");
    worker.child.kill("SIGKILL");
    await worker.exited;
    // the heartbeat lapses; the next sweep (any worker, or the CLI) fails the run
    await failAbandonedProbeRuns(world.db, new Date(Date.now() + RUN_HEARTBEAT_STALE_MS + 5_000));
    const after = await getProbeRunOrThrow({ db: world.db }, { runId: run.id });
    expect(after.state).toBe("failed");
    expect(after.reason).toMatch(/stopped/);
    expect(after.results.every((r) => r.status !== "passed" || r.finishedAt !== null)).toBe(true);
    expect(after.results.find((r) => r.probe === "P6")?.status).toBe("error");
  }, 90_000);
});
