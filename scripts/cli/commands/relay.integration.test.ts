import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { hashHandle } from "../../../lib/relay/handle";
import { relayCall } from "../../../lib/relay/relay-call";
import { createRelayTestTask, SIMPLE_REQUEST } from "../../../lib/relay/testing/relay-fixtures";
import { runCli } from "../../../lib/testing/run-cli";
import { createTestDatabase } from "../../../lib/testing/test-database";
import { ensureCredentialsDir } from "../../../lib/secrets/credential-file";

const DEMO_SCRIPT = path.resolve(import.meta.dirname, "../../../lib/demo/scripted-completions.json");

describe("schoolcore relay", async () => {
  const { db, url } = await createTestDatabase();
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "relay-cli-"));
  const env = { DATABASE_URL: url, DATA_DIR: dir };
  afterAll(() => fs.rm(dir, { recursive: true, force: true }));

  it("url prints where guests reach the relay listener: RELAY_PUBLIC_URL, else HOSTNAME:RELAY_PORT", async () => {
    const own = await runCli(["relay", "url", "--json"], {
      env: { ...env, HOSTNAME: "127.0.0.1", RELAY_PORT: "3999" },
    });
    expect(JSON.parse(own.stdout)).toEqual({ url: "http://127.0.0.1:3999" });
    const proxied = await runCli(["relay", "url", "--json"], {
      env: { ...env, RELAY_PUBLIC_URL: "http://relay.school.example:8080" },
    });
    expect(JSON.parse(proxied.stdout)).toEqual({ url: "http://relay.school.example:8080" });
  });

  it("upstream set/show: scripted, then openai with a credential file whose contents are never printed", async () => {
    const show = await runCli(["relay", "upstream", "show", "--json"], { env });
    expect(JSON.parse(show.stdout)).toMatchObject({ kind: "none" });

    const demo = DEMO_SCRIPT;
    const scripted = await runCli(
      ["relay", "upstream", "set", "--kind", "scripted", "--script-file", demo, "--reason", "the demo", "--json"],
      { env },
    );
    expect(scripted.stderr).toBe("");
    expect(JSON.parse(scripted.stdout)).toMatchObject({
      kind: "scripted",
      label: expect.stringMatching(/not a model/),
      scriptFile: demo,
    });

    const credential = `canary${randomBytes(12).toString("hex")}`;
    const credentialFile = path.join(ensureCredentialsDir(dir), "cred");
    await fs.writeFile(credentialFile, credential);
    const openai = await runCli(
      [
        "relay",
        "upstream",
        "set",
        "--kind",
        "openai",
        "--endpoint",
        "http://127.0.0.1:9/v1/chat/completions",
        "--model",
        "m",
        "--credential-file",
        credentialFile,
        "--reason",
        "a real upstream",
      ],
      { env },
    );
    expect(openai.code).toBe(0);
    const shown = await runCli(["relay", "upstream", "show"], { env });
    expect(shown.stdout).toMatch(/kind: openai/);
    expect(shown.stdout).toMatch(/contents never shown/);
    for (const out of [openai, shown]) expect(out.stdout + out.stderr).not.toContain(credential);
    const stored = await db.operatorSetting.findUniqueOrThrow({ where: { key: "relay.upstream" } });
    expect(JSON.stringify(stored.value)).not.toContain(credential);
    expect(await db.auditLog.count({ where: { action: "setting.write", targetId: "relay.upstream" } })).toBe(2);
  });

  it.each([
    [["relay", "upstream", "set", "--kind", "proxy"], /--kind must be/],
    [
      ["relay", "upstream", "set", "--kind", "scripted", "--script-file", "/nonexistent.json"],
      /not a readable scripted-completions file/,
    ],
    [
      [
        "relay",
        "upstream",
        "set",
        "--kind",
        "openai",
        "--endpoint",
        "https://x/",
        "--model",
        "m",
        "--credential-file",
        "/nonexistent",
        "--reason",
        "test",
      ],
      /credential file \/nonexistent is refused: it is not inside DATA_DIR\/credentials\//,
    ],
    [
      // The credential file the set/show test wrote: only the endpoint is wrong here.
      [
        "relay",
        "upstream",
        "set",
        "--kind",
        "openai",
        "--endpoint",
        "http://x/",
        "--model",
        "m",
        "--credential-file",
        path.join(dir, "credentials", "cred"),
        "--reason",
        "test",
      ],
      /must be https/,
    ],
    [["relay", "upstream", "set", "--kind", "anthropic", "--model", "m"], /--endpoint is required/],
    [
      ["relay", "upstream", "set", "--kind", "scripted", "--script-file", DEMO_SCRIPT],
      /reason: Say why \(at least 3 characters\)/,
    ],
    [
      ["relay", "upstream", "set", "--kind", "scripted", "--script-file", DEMO_SCRIPT, "--reason", "ok"],
      /reason: Say why/,
    ],
    [["relay", "issue"], /--task is required/],
    [["relay", "issue", "--task", "00000000-0000-4000-8000-000000000000"], /No such task/],
    [["relay", "issue", "--task", "x"], /must be a task id/],
    [
      ["relay", "issue", "--task", "00000000-0000-4000-8000-000000000000", "--ops", "shell"],
      /unknown operation "shell"/,
    ],
    [["relay", "issue", "--task", "00000000-0000-4000-8000-000000000000", "--max-requests", "ten"], /whole number/],
  ])("refuses %j with one clear line", async (args, message) => {
    const result = await runCli(args, { env });
    expect(result.code).not.toBe(0);
    expect(result.stderr).toMatch(message);
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("issue prints the handle once (stored only as a hash, audit-logged), usage shows counters, revoke is idempotent", async () => {
    const { taskId } = await createRelayTestTask(db);
    const issued = await runCli(
      ["relay", "issue", "--task", taskId, "--max-requests", "3", "--max-bytes", "50000", "--ttl", "120", "--json"],
      { env },
    );
    expect(issued.stderr).toBe("");
    const out = JSON.parse(issued.stdout);
    expect(out).toMatchObject({
      taskId,
      maxRequests: 3,
      maxBytes: 50000,
      ttlSeconds: 120,
      allowedOps: ["complete"],
      maxRequestBytes: 256 * 1024,
    });
    expect(out.handle).toMatch(/^scr_[A-Za-z0-9_-]{43}$/);
    const row = await db.relayCapability.findUniqueOrThrow({
      where: { id: out.capabilityId },
      omit: { handleHash: false },
    });
    expect(row.handleHash).toBe(hashHandle(out.handle));
    const audit = await db.auditLog.findFirstOrThrow({ where: { action: "relay.issue", targetId: out.capabilityId } });
    expect(JSON.stringify(audit.detail)).not.toContain(out.handle);

    // The handle works (against the openai upstream set above, at a closed port: a visible upstream failure).
    const call = await relayCall({
      db,
      handle: out.handle,
      taskId,
      operation: "complete",
      request: SIMPLE_REQUEST,
      channel: "http",
      dataDir: dir,
    });
    expect(call.code).toBe("RELAY_UPSTREAM_FAILED");

    const text = await runCli(["relay", "issue", "--task", taskId], { env });
    expect(text.stdout).toMatch(/handle \(shown once, stored only as a hash\): scr_/);

    const usage = await runCli(["relay", "usage", "--task", taskId, "--json"], { env });
    expect(JSON.parse(usage.stdout)).toMatchObject({ taskId, isRevoked: false, limits: { maxRequests: 20 } });

    const revoked = await runCli(["relay", "revoke", "--task", taskId, "--reason", "operator test", "--json"], { env });
    expect(JSON.parse(revoked.stdout).revokedCapabilityIds).toHaveLength(1); // the first was revoked by the upstream failure
    const again = await runCli(["relay", "revoke", "--task", taskId], { env });
    expect(again.stdout).toMatch(/nothing changed/);
    const after = await runCli(["relay", "usage", "--task", taskId, "--json"], { env });
    expect(JSON.parse(after.stdout)).toMatchObject({ isRevoked: true, revokedReason: "operator test" });
  });

  it("usage reports tokens (reported input/output, charged of max) and model cost, for the capability and the whole task", async () => {
    const { taskId } = await createRelayTestTask(db);
    const capability = (maxTokens: number, createdAt: Date) =>
      db.relayCapability.create({
        data: {
          taskId,
          handleHash: randomBytes(32).toString("hex"),
          allowedOps: ["chat"],
          maxRequests: 10,
          maxBytes: 100_000n,
          maxRequestBytes: 10_000,
          maxResponseBytes: 10_000,
          maxTokens: BigInt(maxTokens),
          inputMicrosPerMTok: 3_000_000,
          outputMicrosPerMTok: 15_000_000,
          modelReservedMicros: 750_000n,
          deadlineAt: new Date(Date.now() + 60_000),
          createdAt,
        },
      });
    const round1 = await capability(10_000, new Date(Date.now() - 60_000));
    const round2 = await capability(50_000, new Date());
    const call = (
      capabilityId: string,
      fields: { in: number | null; out: number | null; charged: number; cost: number; outcome?: string },
    ) => ({
      capabilityId,
      channel: "http",
      operation: "chat",
      outcome: fields.outcome ?? "ok:openai",
      requestBytes: 100,
      inputTokens: fields.in,
      outputTokens: fields.out,
      tokensCharged: fields.charged,
      costMicros: BigInt(fields.cost),
    });
    await db.relayCall.createMany({
      data: [
        call(round1.id, { in: 1000, out: 200, charged: 1200, cost: 6000 }),
        call(round2.id, { in: 2000, out: 500, charged: 2500, cost: 13_500 }),
        call(round2.id, { in: 3000, out: 100, charged: 3100, cost: 10_500 }),
        // not reported: charged at its worst case, not counted as input/output
        call(round2.id, { in: null, out: null, charged: 8000, cost: 90_000 }),
        call(round2.id, { in: null, out: null, charged: 0, cost: 0, outcome: "RELAY_QUOTA_EXHAUSTED" }),
      ],
    });

    const usage = await runCli(["relay", "usage", "--task", taskId, "--json"], { env });
    expect(usage.stderr).toBe("");
    const out = JSON.parse(usage.stdout);
    expect(out).toMatchObject({
      capabilityId: round2.id,
      limits: { maxRequests: 10 },
      calls: { total: 4 },
      tokens: { input: 5000, output: 600, charged: 13_600, max: 50_000, unreportedCalls: 1 },
      modelCostMicros: 114_000,
      modelReservedMicros: 750_000,
      prices: { inputMicrosPerMTok: 3_000_000, outputMicrosPerMTok: 15_000_000 },
      task: {
        capabilities: 2,
        tokens: { input: 6000, output: 800, charged: 14_800, unreportedCalls: 1 },
        modelCostMicros: 120_000,
      },
    });
    const text = await runCli(["relay", "usage", "--task", taskId], { env });
    expect(text.stdout).toMatch(
      /tokens input 5000, output 600 \(reported\); charged 13600\/50000 — 1 call\(s\) without reported tokens/,
    );
    expect(text.stdout).toMatch(/model cost \$0\.1140, \$0\.7500 reserved/);
    expect(text.stdout).toMatch(
      /task \(2 capabilities\): tokens input 6000, output 800, charged 14800; model cost \$0\.1200/,
    );
  });
});
