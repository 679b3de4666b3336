/**
 * Seed 000 "Credential isolation": the upstream credential lives only in the transport. A canary
 * credential (shaped so the redactor does NOT recognise it: any leak would be visible) is used
 * for real calls through both channels, including upstream errors that echo it; then every row of
 * every table, every captured log line and every piece of evidence is scanned for it.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startRelayServer } from "./relay-server";
import { ensureCredentialsDir } from "../secrets/credential-file";
import { createTestDatabase } from "../testing/test-database";
import { issueCapability } from "./issue-capability";
import { encodeMailboxResponse } from "./mailbox-protocol";
import { processMailboxRequest } from "./process-mailbox-request";
import { readCapabilityUsage } from "./read-capability-usage";
import { relayCall } from "./relay-call";
import { startFakeAnthropicServer, startFakeOpenAiServer } from "./testing/fake-upstream-servers";
import { createRelayTestTask, SIMPLE_REQUEST } from "./testing/relay-fixtures";
import { closeUpstreamAgents } from "./transports/http-upstream";
import { describeRelayUpstream, readRelayUpstream, setRelayUpstream } from "./upstream-setting";

const CANARY = `canary${randomBytes(16).toString("hex")}`;
const WRONG_CANARY = `wrongcanary${randomBytes(16).toString("hex")}`;

describe("the upstream credential never leaves the transport", async () => {
  const { db } = await createTestDatabase();
  // The test's DATA_DIR: the credential lives in its credentials/ directory, as the rule requires.
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), "relay-canary-"));
  const credentialFile = path.join(ensureCredentialsDir(dir), "credential");
  await fs.writeFile(credentialFile, CANARY);
  const openai = await startFakeOpenAiServer({ credential: CANARY, reply: () => "fine" });
  const anthropic = await startFakeAnthropicServer({ credential: CANARY, reply: () => "fine" });
  const listener = await startRelayServer({ db, host: "127.0.0.1", port: 0, dataDir: dir });

  const logged: string[] = [];
  const originalWrite = process.stderr.write.bind(process.stderr);
  process.stderr.write = ((chunk: string | Uint8Array, ...rest: unknown[]) => {
    logged.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
    return (originalWrite as (...a: unknown[]) => boolean)(chunk, ...rest);
  }) as typeof process.stderr.write;

  afterAll(async () => {
    process.stderr.write = originalWrite;
    await listener.close();
    await closeUpstreamAgents();
    await openai.close();
    await anthropic.close();
    await fs.rm(dir, { recursive: true, force: true });
  });

  const evidence: unknown[] = [];

  async function newCapability() {
    const { taskId } = await createRelayTestTask(db);
    const issued = await issueCapability(
      { db },
      {
        taskId,
        maxRequests: 20,
        maxBytes: 1_000_000,
        maxRequestBytes: 100_000,
        maxResponseBytes: 100_000,
        maxTokens: 1_000_000,
        ttlSeconds: 600,
      },
    );
    return { taskId, ...issued };
  }

  it.each(["openai", "anthropic"] as const)(
    "%s: success, echoed-key upstream errors and a rotated wrong key all keep the canary in the transport",
    async (kind) => {
      const fake = kind === "openai" ? openai : anthropic;
      await setRelayUpstream({
        db,
        value: { kind, endpoint: fake.endpoint, model: "model-x", credentialFile, requestTimeoutMs: 2000 },
        via: "test",
        dataDir: dir,
        reason: "test setup",
      });
      evidence.push(describeRelayUpstream((await readRelayUpstream({ db }))!));

      const ok = await newCapability();
      const success = await relayCall({
        db,
        dataDir: dir,
        handle: ok.handle,
        taskId: ok.taskId,
        operation: "complete",
        request: SIMPLE_REQUEST,
        channel: "http",
      });
      expect(success.status).toBe(200);
      // The canary really was the credential used upstream.
      expect(fake.requests.at(-1)!.authorization ?? fake.requests.at(-1)!.apiKey).toContain(CANARY);
      evidence.push(success.body);

      // Through the relay listener…
      const routed = await fetch(`${listener.url}/api/relay/v1/complete`, {
        method: "POST",
        headers: { authorization: `Bearer ${ok.handle}`, "content-type": "application/json" },
        body: JSON.stringify({ taskId: ok.taskId, request: SIMPLE_REQUEST }),
      });
      expect(routed.status).toBe(200);
      evidence.push(await routed.text());

      // …and the mailbox.
      const mailbox = await processMailboxRequest({
        db,
        dataDir: dir,
        taskId: ok.taskId,
        sequence: 1,
        bytes: Buffer.from(
          JSON.stringify({
            v: 1,
            handle: ok.handle,
            taskId: ok.taskId,
            operation: "complete",
            request: SIMPLE_REQUEST,
          }),
        ),
      });
      expect(mailbox.status).toBe(200);
      evidence.push(mailbox.responseBytes.toString("utf8"));

      // An upstream 500 whose body echoes the key.
      fake.mode = "status500";
      const failed = await newCapability();
      const failure = await relayCall({
        db,
        dataDir: dir,
        handle: failed.handle,
        taskId: failed.taskId,
        operation: "complete",
        request: SIMPLE_REQUEST,
        channel: "http",
      });
      expect(failure.status).toBe(502);
      evidence.push(failure.body);
      fake.mode = "ok";

      // A rotated, wrong key: the upstream's 401 names it.
      await fs.writeFile(credentialFile, WRONG_CANARY);
      const wrong = await newCapability();
      const unauthorized = await relayCall({
        db,
        dataDir: dir,
        handle: wrong.handle,
        taskId: wrong.taskId,
        operation: "complete",
        request: SIMPLE_REQUEST,
        channel: "http",
      });
      expect(unauthorized.status).toBe(502);
      expect(unauthorized.body).toMatchObject({ error: { message: expect.stringMatching(/http_status 401/) } });
      evidence.push(unauthorized.body);
      await fs.writeFile(credentialFile, CANARY);

      for (const cap of [ok, failed, wrong])
        evidence.push(await readCapabilityUsage({ db }, { capabilityId: cap.capabilityId }));
    },
  );

  it("no table, log line or piece of evidence holds the canary", async () => {
    const tables = await db.$queryRawUnsafe<{ name: string }[]>(
      `select table_name as name from information_schema.tables where table_schema = 'public' and table_type = 'BASE TABLE'`,
    );
    expect(tables.map((t) => t.name)).toEqual(
      expect.arrayContaining(["RelayCapability", "RelayCall", "OperatorSetting", "AuditLog"]),
    );
    let scannedRows = 0;
    for (const { name } of tables) {
      const rows = await db.$queryRawUnsafe<{ j: string }[]>(`select row_to_json(t)::text as j from "${name}" t`);
      scannedRows += rows.length;
      for (const row of rows) {
        expect(row.j, `table ${name}`).not.toContain(CANARY);
        expect(row.j, `table ${name}`).not.toContain(WRONG_CANARY);
      }
    }
    expect(scannedRows).toBeGreaterThan(10);
    const logText = logged.join("");
    expect(logText).toMatch(/relay upstream failed/);
    expect(logText).not.toContain(CANARY);
    expect(logText).not.toContain(WRONG_CANARY);
    const evidenceText = JSON.stringify(evidence) + encodeMailboxResponse(200, evidence).toString();
    expect(evidence.length).toBeGreaterThan(10);
    expect(evidenceText).not.toContain(CANARY);
    expect(evidenceText).not.toContain(WRONG_CANARY);
  });
});
