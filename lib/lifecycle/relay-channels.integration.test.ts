/**
 * The reference student agent, inside a real guest, talks to the scripted transport through the
 * task's relay capability — once over the mailbox (network blocked) and once over the HTTP channel
 * (one forwarded socket to the relay endpoint) — and the demo task reaches review with passing
 * trusted evidence both times.
 */
import fs from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GUEST_STUDENT_AGENT_PROGRAM } from "../contract/guest-layout";
import { DEMO_SCRIPTED_COMPLETIONS } from "../demo/seed-demo-environment";
import { createRelayRequestListener } from "../relay/relay-http";
import { setRelayUpstream } from "../relay/upstream-setting";
import { advanceTask } from "../jobs/advance-task";
import { qualifyForTests } from "../probes/testing/qualify-for-tests";
import { ensureCredentialsDir } from "../secrets/credential-file";
import { createLifecycleWorld, type LifecycleWorld } from "./testing/lifecycle-fixture";

const STUDENT_AGENT = ["node", GUEST_STUDENT_AGENT_PROGRAM];
let world: LifecycleWorld;
let relayServer: http.Server;

beforeAll(async () => {
  world = await createLifecycleWorld();
  await setRelayUpstream({
    db: world.db,
    value: { kind: "scripted", scriptFile: DEMO_SCRIPTED_COMPLETIONS },
    via: "test",
    reason: "test setup",
  });
  // The relay listener's real request handler (lib/relay/relay-server.ts serves the same one).
  relayServer = http.createServer(createRelayRequestListener({ db: world.db }));
  await new Promise<void>((resolve) => relayServer.listen(0, "127.0.0.1", resolve));
});

afterAll(async () => {
  await new Promise((resolve) => relayServer?.close(resolve));
});

async function runDemo(channel: "mailbox" | "http") {
  const taskId = await world.createDemoTask({ agentCommand: STUDENT_AGENT, limits: { relayChannel: channel } });
  const ctx = {
    ...world.ctx,
    env: { ...world.ctx.env, RELAY_PUBLIC_URL: `http://127.0.0.1:${(relayServer.address() as AddressInfo).port}` },
  };
  // The guest is pointed at this listener: the relay endpoint is part of the qualified
  // configuration, so the world is qualified for it.
  await qualifyForTests(world.db, ctx.env);
  await advanceTask(ctx, taskId);
  const task = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
  expect(task.state, `${task.errorCode}: ${task.errorSummary}`).toBe("review_pending");
  const evidence = await world.db.verificationEvidence.findFirstOrThrow({ where: { taskId } });
  expect(evidence.isPass).toBe(true);
  const calls = await world.db.relayCall.findMany({ where: { capability: { taskId } } });
  expect(calls.map((c) => [c.channel, c.outcome])).toEqual([[channel, "ok:scripted"]]);
  const capabilities = await world.db.relayCapability.findMany({ where: { taskId } });
  for (const c of capabilities) expect(c.revokedAt).not.toBeNull();
  expect(await world.liveAtProvider()).toBe(0);
}

describe("the student agent through the task relay", () => {
  it("over the mailbox, with the guest's network blocked", () => runDemo("mailbox"));
  it("over the HTTP channel, through the one forwarded relay socket", () => runDemo("http"));

  it("an upstream failure blocks the task with a visible relay error — no fallback of any kind", async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve)); // nothing listens there any more
    // A real credential file in the world's DATA_DIR/credentials/ (never the substrate token): the failure under test is the upstream's.
    const credentialFile = path.join(ensureCredentialsDir(world.env.dataDir), "upstream-key");
    await fs.writeFile(credentialFile, "sk-test-0123456789\n", { mode: 0o600 });
    await setRelayUpstream({
      db: world.db,
      dataDir: world.env.dataDir,
      value: {
        kind: "openai",
        endpoint: `http://127.0.0.1:${port}/v1/chat/completions`,
        model: "m",
        credentialFile,
        connectTimeoutMs: 500,
        requestTimeoutMs: 2000,
      },
      via: "test",
      reason: "test setup",
    });
    try {
      const taskId = await world.createDemoTask({ agentCommand: STUDENT_AGENT, limits: { relayChannel: "mailbox" } });
      await advanceTask(world.ctx, taskId);
      const task = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
      expect(task.state).toBe("blocked");
      expect(task.errorCode).toBe("RELAY_UPSTREAM_FAILED");
      expect(await world.db.candidate.count({ where: { taskId } })).toBe(0);
      expect(await world.liveAtProvider()).toBe(0);
    } finally {
      await setRelayUpstream({
        db: world.db,
        value: { kind: "scripted", scriptFile: DEMO_SCRIPTED_COMPLETIONS },
        via: "test",
        reason: "test setup",
      });
    }
  });
});
