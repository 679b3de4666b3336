/**
 * P2 on the real local substrate with the real relay listener: the guest's relay route is always
 * checked (every proxy attempt refused, the control request reaching the listener), a mailbox
 * request file naming another task is refused without an upstream call — and when the relay
 * listener is not answering, P2 fails naming it instead of passing on "not checked". Both guests run
 * the in-guest model endpoint meanwhile, observed listening on 127.0.0.1:7800 only and forwarding
 * through the guest's own relay channel.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLifecycleWorld, type LifecycleWorld } from "../lifecycle/testing/lifecycle-fixture";
import { probeDepsFor } from "../jobs/run-probe-job";
import { findFreePort } from "../testing/free-port";
import type { TEnv } from "../env";
import { executeProbeRun } from "./execute-probe-run";
import { getProbeRunOrThrow } from "./probe-run.repo";
import { requestProbeRun } from "./request-probe-run";
import { startProbeRelayListener, type TProbeRelayListener } from "./testing/probe-relay-listener";

/** The parts of P2's recorded detail these tests read. */
type TP2Detail = {
  problems?: string[];
  relay: {
    endpoint: string;
    isReachable: boolean;
    attempts: { label: string; status: string | null; sawTarget: boolean }[];
    modelEndpoint: TEndpointDetail;
  };
  mailbox: { guestSaw: { summary: string | null } };
  listenerHits: { http: number; udp: number };
  externalTargets: number;
  attempts: { host: string }[];
  modelEndpoint: TEndpointDetail;
};
type TEndpointDetail = {
  startError: string | null;
  listening: string[];
  otherListeners: string[];
  models: { status: number; modelIds: string[] };
  chat: { status: number | null; code: string | null };
  mailboxRequests: { name: string; operation: string; taskId: string }[];
  writes: { where: string; bytes: number; sha256: string }[];
};

let world: LifecycleWorld;
let relay: TProbeRelayListener;

beforeAll(async () => {
  world = await createLifecycleWorld();
  relay = await startProbeRelayListener(world.db);
});

afterAll(async () => {
  await relay?.close();
});

async function runP2(env: TEnv) {
  const run = await requestProbeRun({ db: world.db, env }, { probes: ["P2"], actor: null, isRunByCaller: true });
  const deps = probeDepsFor(
    { ...world.ctx, env },
    { isProviderSpawn: ({ stack }) => stack.includes(`${path.sep}sidecars${path.sep}local-substrate${path.sep}`) },
  );
  const state = await executeProbeRun(deps, { runId: run.id });
  const result = (await getProbeRunOrThrow({ db: world.db }, { runId: run.id })).results[0]!;
  return { runId: run.id, state, result, detail: result.detail as unknown as TP2Detail };
}

describe("P2 forbidden egress", () => {
  it("passes: the relay route refuses every proxy attempt from inside the guest, and the mailbox refuses a file naming another task", async () => {
    const { state, detail, runId } = await runP2(relay.envFor(world.env));
    expect(state, JSON.stringify(detail.problems ?? detail)).toBe("passed");
    // the HTTP relay route was checked, through the guest's one route, against the real listener
    expect(detail.relay).toMatchObject({ endpoint: relay.url, isReachable: true, control: { sawExpected: true } });
    const attempts = detail.relay.attempts;
    expect(attempts.map((a) => a.label)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/absolute-form/),
        expect.stringMatching(/another Host/),
        expect.stringMatching(/another method/),
        expect.stringMatching(/CONNECT/),
        expect.stringMatching(/outside \/api\/relay\/v1/),
      ]),
    );
    for (const a of attempts)
      expect([a.label, a.sawTarget, a.status === null || Number(a.status) >= 400]).toEqual([a.label, false, true]);
    expect(detail.listenerHits).toEqual({ http: 0, udp: 0 });
    // the mailbox: refused by the worker's side, recorded, the upstream never called, nothing imported
    expect(detail.mailbox).toMatchObject({
      upstreamCalls: 0,
      candidates: 0,
      relayCalls: [{ channel: "mailbox", sequence: 1, outcome: "RELAY_REFUSED" }],
    });
    expect(detail.mailbox.guestSaw.summary).toMatch(/RELAY_REFUSED/);
    // the model endpoint, up in both guests while they tried every route: loopback only, answering there,
    // forwarding through the guest's channel — a mailbox request file for its task, the relay listener's refusal
    for (const endpoint of [detail.modelEndpoint, detail.relay.modelEndpoint]) {
      expect(endpoint).toMatchObject({
        startError: null,
        listening: ["127.0.0.1:7800"],
        models: { status: 200, modelIds: ["school-core-relay"] },
      });
      expect(endpoint.otherListeners).toEqual([]);
      expect(endpoint.writes.map((w) => w.where)).toContain("/tmp/school-core-output/model-endpoint.log");
    }
    expect(detail.modelEndpoint.mailboxRequests).toEqual([{ name: "000001.json", operation: "chat", taskId: runId }]);
    expect(detail.relay.modelEndpoint.chat).toEqual({ status: 403, code: "RELAY_REFUSED", detail: "" });
    expect(detail.relay.modelEndpoint.mailboxRequests).toEqual([]);
    // no operator external targets by default: nothing beyond loopback was tried
    expect(detail.externalTargets).toBe(0);
    for (const a of detail.attempts) expect(["127.0.0.1", "::1"]).toContain(a.host);
    // the probe's task is closed and its machines are gone
    const tasks = await world.db.task.findMany({ where: { probeRunId: runId }, include: { machines: true } });
    expect(tasks.map((t) => t.state)).toEqual(["failed"]);
    expect(tasks[0]!.machines.every((m) => m.state === "destroyed")).toBe(true);
    expect(await world.liveAtProvider()).toBe(0);
  }, 150_000);

  it('fails naming the relay listener when nothing answers there (never passes on "not checked")', async () => {
    const closedPort = await findFreePort();
    const { state, result, detail } = await runP2({
      ...world.env,
      HOSTNAME: "127.0.0.1",
      RELAY_PORT: closedPort,
      RELAY_PUBLIC_URL: undefined,
    });
    expect(state).toBe("failed");
    expect(result.status).toBe("failed");
    expect(detail.relay).toMatchObject({ isReachable: false });
    expect((detail.problems ?? []).join("\n")).toMatch(
      new RegExp(`relay listener at http://127\\.0\\.0\\.1:${closedPort} is unreachable`),
    );
  }, 150_000);
});
