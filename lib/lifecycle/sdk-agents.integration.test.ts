/**
 * Issue 25 "Real agents": the tool-using reference agent, written against the official `openai`
 * SDK, runs inside a real guest as the default agent command. The runner's model endpoint turns its
 * streamed tool-calling turns into relay `chat` calls — over the mailbox (network blocked) and over
 * the HTTP channel — answered first by the scripted demo transport (read_file → write_file →
 * run_tests → a final summary), then by a real `openai`-kind transport talking to a loopback
 * upstream that speaks the OpenAI wire format, and a real `anthropic`-kind transport talking to an
 * Anthropic-format one (the endpoint and the relay translate; the agent is the same). Each time the demo task reaches review with passing
 * trusted checks.
 */
import fs from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GUEST_STUDENT_REPORT_FILE } from "../contract/guest-layout";
import { DEMO_SCRIPTED_COMPLETIONS } from "../demo/seed-demo-environment";
import { createRelayRequestListener } from "../relay/relay-http";
import {
  startFakeAnthropicServer,
  startFakeOpenAiServer,
  type TFakeUpstream,
} from "../relay/testing/fake-upstream-servers";
import { setRelayUpstream } from "../relay/upstream-setting";
import { ensureCredentialsDir } from "../secrets/credential-file";
import { SETTING_DEFINITIONS } from "../settings/setting-registry";
import { advanceTask } from "../jobs/advance-task";
import { qualifyForTests } from "../probes/testing/qualify-for-tests";
import { createLifecycleWorld, type LifecycleWorld } from "./testing/lifecycle-fixture";

/** The default `guest.agent` command: the SDK agent. */
const DEFAULT_AGENT = SETTING_DEFINITIONS["guest.agent"].default.command;
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
  relayServer = http.createServer(createRelayRequestListener({ db: world.db, dataDir: world.env.dataDir }));
  await new Promise<void>((resolve) => relayServer.listen(0, "127.0.0.1", resolve));
});

afterAll(async () => {
  await new Promise((resolve) => relayServer?.close(resolve));
});

async function runDemo(channel: "mailbox" | "http", agentCommand: string[] = DEFAULT_AGENT) {
  const taskId = await world.createDemoTask({ agentCommand, limits: { relayChannel: channel } });
  const ctx = {
    ...world.ctx,
    env: { ...world.ctx.env, RELAY_PUBLIC_URL: `http://127.0.0.1:${(relayServer.address() as AddressInfo).port}` },
  };
  await qualifyForTests(world.db, ctx.env);
  await advanceTask(ctx, taskId);
  const task = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
  const report = await world.db.guestRoundReport.findFirst({ where: { taskId } });
  expect(task.state, `${task.errorCode}: ${task.errorSummary}\n${JSON.stringify(report?.report)}`).toBe(
    "review_pending",
  );
  const evidence = await world.db.verificationEvidence.findFirstOrThrow({ where: { taskId } });
  expect(evidence.isPass).toBe(true);
  const candidate = await world.db.candidate.findFirstOrThrow({ where: { taskId } });
  return { taskId, task, report: report?.report as Record<string, unknown> | undefined, candidate };
}

async function relayCalls(taskId: string) {
  return world.db.relayCall.findMany({ where: { capability: { taskId } }, orderBy: { createdAt: "asc" } });
}

describe("the SDK agents through the in-guest model endpoint", () => {
  it("is the default guest.agent command", () => {
    expect(DEFAULT_AGENT).toEqual(["node", "/tmp/school-core-input/openai-agent.mjs"]);
  });

  for (const channel of ["mailbox", "http"] as const) {
    it(`walks the scripted tool loop over the ${channel} channel: read, write, test, summary; the fix reaches review`, async () => {
      const { taskId, report } = await runDemo(channel);
      const calls = await relayCalls(taskId);
      // models.list is answered by the endpoint itself; each of the four turns is one chat call.
      expect(calls.map((c) => [c.operation, c.channel, c.outcome])).toEqual(
        Array.from({ length: 4 }, () => ["chat", channel, "ok:scripted"]),
      );
      expect(JSON.stringify(report)).toContain("It now returns the sum");
      expect(JSON.stringify(report)).toContain("Edited: src/add.js");
      expect(report).toMatchObject({ supplementalChecks: [{ command: "npm test", exitCode: 0 }] });
      const capabilities = await world.db.relayCapability.findMany({ where: { taskId } });
      for (const c of capabilities) expect(c.revokedAt).not.toBeNull();
      expect(await world.liveAtProvider()).toBe(0);
    });
  }

  it("tells the operator what the endpoint refused: its log's tail reaches the diagnostics (untrusted)", async () => {
    // An agent that asks for n=2 (refused with a 400 naming the field), then fixes the file itself.
    const ask = `fetch(process.env.OPENAI_BASE_URL + "/chat/completions", { method: "POST", headers: { "content-type": "application/json" }, body: JSON.stringify({ model: "x", n: 2, messages: [{ role: "user", content: "hi" }] }) }).then((r) => process.stdout.write(String(r.status)))`;
    const agent = [
      "sh",
      "-c",
      `node -e '${ask}' && sed -i 's/a - b/a + b/' src/add.js && printf '{"summary":"fixed"}' > ${GUEST_STUDENT_REPORT_FILE}`,
    ];
    const taskId = await world.createDemoTask({ agentCommand: agent, limits: { relayChannel: "mailbox" } });
    await advanceTask(world.ctx, taskId);
    const task = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
    expect(task.state, `${task.errorCode}: ${task.errorSummary}`).toBe("review_pending");
    const report = (await world.db.guestRoundReport.findFirstOrThrow({ where: { taskId } })).report as {
      diagnostics: string;
    };
    expect(report.diagnostics).toContain("model endpoint log tail (untrusted):");
    expect(report.diagnostics).toMatch(/POST \/v1\/chat\/completions → 400 unsupported_parameter: n: only 1/);
    expect(await relayCalls(taskId)).toEqual([]);
  });

  describe("with a real openai transport and a loopback OpenAI-format upstream answering with tool calls", () => {
    let upstream: TFakeUpstream;
    const credential = `sk-test-${"k".repeat(24)}`;

    beforeAll(async () => {
      upstream = await startFakeOpenAiServer({ credential });
      upstream.respond = answerAsToolUsingModel;
      const credentialFile = path.join(ensureCredentialsDir(world.env.dataDir), "openai-key");
      await fs.writeFile(credentialFile, credential, { mode: 0o600 });
      await setRelayUpstream({
        db: world.db,
        value: { kind: "openai", endpoint: upstream.endpoint, model: "gpt-test-pinned", credentialFile },
        via: "test",
        dataDir: world.env.dataDir,
        reason: "test setup",
      });
    });

    afterAll(async () => {
      await setRelayUpstream({
        db: world.db,
        value: { kind: "scripted", scriptFile: DEMO_SCRIPTED_COMPLETIONS },
        via: "test",
        reason: "test setup",
      });
      await upstream?.close();
    });

    it("fixes the demo over the mailbox; the upstream sees the pinned model, the tools and the tool results", async () => {
      const { taskId, report } = await runDemo("mailbox");
      const calls = await relayCalls(taskId);
      expect(calls.map((c) => [c.operation, c.outcome])).toEqual(
        Array.from({ length: 4 }, () => ["chat", "ok:openai"]),
      );
      expect(JSON.stringify(report)).toContain("loopback model: add now adds");
      const bodies = upstream.requests.map(
        (r) => r.body as { model: string; tools: { function: { name: string } }[]; messages: unknown[] },
      );
      expect(bodies.every((b) => b.model === "gpt-test-pinned")).toBe(true);
      expect(bodies[0]!.tools.map((t) => t.function.name)).toEqual([
        "list_files",
        "read_file",
        "write_file",
        "run_tests",
      ]);
      expect(JSON.stringify(bodies[1]!.messages)).toContain("return a - b");
      expect(upstream.requests.every((r) => r.authorization === `Bearer ${credential}`)).toBe(true);
    });
  });

  describe("with a real anthropic transport and a loopback Anthropic-format upstream answering with tool_use blocks", () => {
    let upstream: TFakeUpstream;
    const credential = `sk-ant-test-${"k".repeat(24)}`;

    beforeAll(async () => {
      upstream = await startFakeAnthropicServer({ credential });
      upstream.respond = answerAsToolUsingClaude;
      const credentialFile = path.join(ensureCredentialsDir(world.env.dataDir), "anthropic-key");
      await fs.writeFile(credentialFile, credential, { mode: 0o600 });
      await setRelayUpstream({
        db: world.db,
        value: { kind: "anthropic", endpoint: upstream.endpoint, model: "claude-test-pinned", credentialFile },
        via: "test",
        dataDir: world.env.dataDir,
        reason: "test setup",
      });
    });

    afterAll(async () => {
      await setRelayUpstream({
        db: world.db,
        value: { kind: "scripted", scriptFile: DEMO_SCRIPTED_COMPLETIONS },
        via: "test",
        reason: "test setup",
      });
      await upstream?.close();
    });

    it("the Anthropic-SDK agent, unmodified, fixes the demo over the HTTP channel; the upstream sees the pinned model, the tools and the tool results", async () => {
      const { taskId, report } = await runDemo("http", ["node", "/tmp/school-core-input/anthropic-agent.mjs"]);
      const calls = await relayCalls(taskId);
      expect(calls.map((c) => [c.operation, c.outcome])).toEqual(
        Array.from({ length: 4 }, () => ["chat", "ok:anthropic"]),
      );
      expect(JSON.stringify(report)).toContain("loopback claude: add now adds");
      const bodies = upstream.requests.map(
        (r) => r.body as { model: string; tools: { name: string }[]; messages: unknown[] },
      );
      expect(bodies.every((b) => b.model === "claude-test-pinned")).toBe(true);
      expect(bodies[0]!.tools.map((t) => t.name)).toEqual(["list_files", "read_file", "write_file", "run_tests"]);
      expect(JSON.stringify(bodies[1]!.messages)).toContain("return a - b");
      expect(upstream.requests.every((r) => r.apiKey === credential)).toBe(true);
    });
  });
});

type TOpenAiMessage = { role: string; content: string | null; tool_calls?: unknown[] };

/** The loopback "model": decides each turn from the last message, as a real one would see it. */
function answerAsToolUsingModel(body: Record<string, unknown>): unknown {
  const messages = body.messages as TOpenAiMessage[];
  const last = messages.at(-1)!;
  const toolCall = (name: string, args: unknown) => ({
    content: null,
    tool_calls: [
      { id: `call_${messages.length}`, type: "function", function: { name, arguments: JSON.stringify(args) } },
    ],
  });
  let message: Record<string, unknown>;
  if (last.role === "user") message = toolCall("read_file", { path: "src/add.js" });
  else if (last.role === "tool" && String(last.content).includes("return a - b"))
    message = toolCall("write_file", {
      path: "src/add.js",
      content: "export function add(a, b) {\n  return a + b;\n}\n",
    });
  else if (last.role === "tool" && String(last.content).startsWith("Wrote src/add.js"))
    message = toolCall("run_tests", {});
  else message = { content: `loopback model: add now adds (${String(last.content).split("\n")[0]})` };
  return {
    id: `chatcmpl-${messages.length}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [
      {
        index: 0,
        message: { role: "assistant", ...message },
        finish_reason: "tool_calls" in message ? "tool_calls" : "stop",
      },
    ],
    usage: { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70 },
  };
}

type TAnthropicBlock = { type: string; text?: string; content?: unknown; tool_use_id?: string };

/** The loopback Claude: decides each turn from the last message's blocks, as a real one would see them. */
function answerAsToolUsingClaude(body: Record<string, unknown>): unknown {
  const messages = body.messages as { role: string; content: string | TAnthropicBlock[] }[];
  const last = messages.at(-1)!;
  const blocks = typeof last.content === "string" ? [{ type: "text", text: last.content }] : last.content;
  const result = blocks.find((b) => b.type === "tool_result");
  const resultText = result
    ? typeof result.content === "string"
      ? result.content
      : JSON.stringify(result.content)
    : "";
  const toolUse = (name: string, input: unknown) => [{ type: "tool_use", id: `toolu_${messages.length}`, name, input }];
  let content: unknown[];
  if (!result) content = toolUse("read_file", { path: "src/add.js" });
  else if (resultText.includes("return a - b"))
    content = toolUse("write_file", {
      path: "src/add.js",
      content: "export function add(a, b) {\n  return a + b;\n}\n",
    });
  else if (resultText.startsWith("Wrote src/add.js")) content = toolUse("run_tests", {});
  else content = [{ type: "text", text: `loopback claude: add now adds (${resultText.split("\n")[0]})` }];
  return {
    id: `msg_${messages.length}`,
    type: "message",
    role: "assistant",
    model: body.model,
    content,
    stop_reason: (content[0] as { type: string }).type === "tool_use" ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage: { input_tokens: 50, output_tokens: 20 },
  };
}
