/**
 * The relay listener as the real process `npm start` runs (scripts/relay.ts), on loopback: budgets
 * stay exact across two listener processes on one database, and 50 concurrent 16 MiB posts with
 * unknown handles are all refused without the process buffering them.
 */
import { spawn, type ChildProcess } from "node:child_process";
import fs from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEMO_SCRIPTED_COMPLETIONS } from "../demo/seed-demo-environment";
import { PROJECT_ROOT } from "../project-root";
import { findFreePort } from "../testing/free-port";
import { createTestDatabase } from "../testing/test-database";
import { issueCapability } from "./issue-capability";
import { readCapabilityUsage } from "./read-capability-usage";
import { createRelayTestTask, SIMPLE_REQUEST } from "./testing/relay-fixtures";
import { setRelayUpstream } from "./upstream-setting";

const children: ChildProcess[] = [];
const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "relay-listener-"));

afterAll(async () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
  await fs.rm(dataDir, { recursive: true, force: true });
});

/** One real listener process; resolves once it answers (anything but the relay route is a 404). */
async function spawnListener(databaseUrl: string): Promise<{ url: string; pid: number }> {
  const port = await findFreePort();
  const child = spawn(process.execPath, ["--import", "tsx", path.join(PROJECT_ROOT, "scripts", "relay.ts")], {
    cwd: PROJECT_ROOT,
    env: {
      ...process.env,
      DATABASE_URL: databaseUrl,
      RELAY_PORT: String(port),
      HOSTNAME: "127.0.0.1",
      DATA_DIR: dataDir,
      LOG_LEVEL: "error",
      NODE_ENV: "production",
    },
    stdio: ["ignore", "ignore", "inherit"],
  });
  children.push(child);
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`the relay listener exited with ${child.exitCode}`);
    const status = await fetch(`${url}/`).then(
      (r) => r.status,
      () => 0,
    );
    if (status === 404) return { url, pid: child.pid! };
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the relay listener did not start within 30 s");
}

function post(url: string, headers: Record<string, string>, body: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      `${url}/api/relay/v1/complete`,
      {
        method: "POST",
        headers: { ...headers, "content-type": "application/json", "content-length": String(Buffer.byteLength(body)) },
      },
      (res) => {
        res.resume().on("end", () => resolve(res.statusCode!));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** A 16 MiB body written with backpressure; the status is taken as soon as the answer arrives. */
function postLarge(url: string, authorization: string, totalBytes: number): Promise<number> {
  return new Promise((resolve, reject) => {
    let status = 0;
    let written = 0;
    const chunk = Buffer.alloc(256 * 1024, 0x7a);
    const req = http.request(
      `${url}/api/relay/v1/complete`,
      {
        method: "POST",
        agent: false,
        headers: { authorization, "content-type": "application/json", "content-length": String(totalBytes) },
      },
      (res) => {
        status = res.statusCode!;
        res.resume().on("end", () => {
          req.destroy();
          resolve(status);
        });
      },
    );
    req.on("error", (error) => (status ? resolve(status) : reject(error)));
    const pump = () => {
      while (written < totalBytes && !status) {
        written += chunk.byteLength;
        if (!req.write(chunk)) return void req.once("drain", pump);
      }
      if (!status) req.end();
    };
    pump();
  });
}

async function rssKiB(pid: number): Promise<number> {
  const status = await fs.readFile(`/proc/${pid}/status`, "utf8");
  return Number(/^VmRSS:\s+(\d+) kB$/m.exec(status)?.[1] ?? NaN);
}

describe("the relay listener process", async () => {
  const { db, url: databaseUrl } = await createTestDatabase();
  await setRelayUpstream({
    db,
    value: { kind: "scripted", scriptFile: DEMO_SCRIPTED_COMPLETIONS },
    via: "test",
    reason: "test setup",
  });
  const [first, second] = await Promise.all([spawnListener(databaseUrl), spawnListener(databaseUrl)]);

  it("500 concurrent calls against a budget of 50, split across two listener processes, admit exactly 50", async () => {
    const { taskId } = await createRelayTestTask(db);
    const { handle, capabilityId } = await issueCapability(
      { db },
      {
        taskId,
        maxRequests: 50,
        maxBytes: 10_000_000,
        maxRequestBytes: 10_000,
        maxResponseBytes: 100_000,
        maxTokens: 1_000_000,
        ttlSeconds: 600,
      },
    );
    const body = JSON.stringify({ taskId, request: SIMPLE_REQUEST });
    const statuses = await Promise.all(
      Array.from({ length: 500 }, (_, i) =>
        post(i % 2 === 0 ? first.url : second.url, { authorization: `Bearer ${handle}` }, body),
      ),
    );
    expect(statuses.filter((s) => s === 200)).toHaveLength(50);
    expect(statuses.filter((s) => s === 429)).toHaveLength(450);
    const usage = await readCapabilityUsage({ db }, { capabilityId });
    expect(usage?.usage.requestCount).toBe(50);
    expect(usage?.revokedReason).toBe("exhausted:requests");
    expect(usage?.calls.byOutcome["ok:scripted"]).toBe(50);
    // The reservations were all released: the rows sum to the budget's counter.
    const calls = await db.relayCall.findMany({ where: { capabilityId } });
    expect(calls.reduce((sum, c) => sum + c.requestBytes + c.responseBytes, 0)).toBe(usage?.usage.bytesUsed);
  });

  it("a changed upstream setting is used by the next call in every listener process", async () => {
    const scriptFile = path.join(dataDir, "script.json");
    await fs.writeFile(scriptFile, JSON.stringify({ default: "from the second script", entries: [] }));
    const { taskId } = await createRelayTestTask(db);
    const { handle } = await issueCapability(
      { db },
      {
        taskId,
        maxRequests: 10,
        maxBytes: 1_000_000,
        maxRequestBytes: 10_000,
        maxResponseBytes: 10_000,
        maxTokens: 1_000_000,
        ttlSeconds: 600,
      },
    );
    const body = JSON.stringify({ taskId, request: SIMPLE_REQUEST });
    const answer = async (url: string) => {
      const response = await fetch(`${url}/api/relay/v1/complete`, {
        method: "POST",
        headers: { authorization: `Bearer ${handle}`, "content-type": "application/json" },
        body,
      });
      return ((await response.json()) as { completion: { content: string } }).completion.content;
    };
    expect(await answer(first.url)).not.toBe("from the second script");
    await setRelayUpstream({ db, value: { kind: "scripted", scriptFile }, via: "test", reason: "test setup" });
    expect(await answer(first.url)).toBe("from the second script");
    expect(await answer(second.url)).toBe("from the second script");
    await setRelayUpstream({
      db,
      value: { kind: "scripted", scriptFile: DEMO_SCRIPTED_COMPLETIONS },
      via: "test",
      reason: "test setup",
    });
  });

  it(
    "50 concurrent 16 MiB posts with unknown handles are all answered 4xx and keep the process under +100 MB RSS",
    { timeout: 60_000 },
    async () => {
      const baseline = await rssKiB(first.pid);
      let peak = baseline;
      let isSampling = true;
      const sampler = (async () => {
        while (isSampling) {
          peak = Math.max(peak, await rssKiB(first.pid));
          await new Promise((r) => setTimeout(r, 20));
        }
      })();
      const statuses = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          postLarge(first.url, `Bearer scr_${String(i).padStart(2, "0")}${"U".repeat(41)}`, 16 * 1024 * 1024),
        ),
      );
      isSampling = false;
      await sampler;
      expect(statuses.every((s) => s >= 400 && s < 500)).toBe(true);
      expect(peak - baseline).toBeLessThan(100 * 1024);
    },
  );
});
