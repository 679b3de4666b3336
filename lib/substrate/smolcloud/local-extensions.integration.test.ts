/**
 * The adapter's use of the local long poll (local-extensions.ts, issue 29), against real local
 * substrates over real HTTP: where the extension is served, waitForFiles and waitReady answer when
 * the thing happens, not at a polling interval; where it is not (a substrate started without
 * extensions answers like the hosted API), and where the long poll fails, the adapter polls as
 * before and still gets every answer right.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_GUEST_IMAGE } from "../../../sidecars/local-substrate/default-guest-image";
import {
  startTestSubstrate,
  type TTestSubstrate,
} from "../../../sidecars/local-substrate/testing/local-substrate-fixture";
import { SmolCloudSubstrate } from "./smolcloud-substrate";

let withWait: TTestSubstrate;
let hostedLike: TTestSubstrate;
const adapters: SmolCloudSubstrate[] = [];

async function adapterFor(s: TTestSubstrate): Promise<SmolCloudSubstrate> {
  const tokenFile = path.join(await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-token-")), "token");
  await fs.writeFile(tokenFile, s.token, { mode: 0o600 });
  const adapter = new SmolCloudSubstrate({ baseUrl: s.url, tokenFile, label: "local" });
  adapters.push(adapter);
  return adapter;
}

async function readyMachine(adapter: SmolCloudSubstrate, name: string): Promise<string> {
  const machine = await adapter.create({
    name: `${name}-${Date.now()}`,
    source: { type: "smolmachine", reference: DEFAULT_GUEST_IMAGE },
    resources: { cpus: 1, memoryMb: 256, diskGb: 1 },
    network: { mode: "blocked" },
    ttlSeconds: 600,
  });
  await adapter.start(machine.id);
  const ready = await adapter.waitReady(machine.id, { timeoutMs: 20_000, pollMs: 100 });
  expect(ready.ready).toBe(true);
  return machine.id;
}

beforeAll(async () => {
  [withWait, hostedLike] = await Promise.all([
    startTestSubstrate({ readinessDelayMs: 300 }),
    startTestSubstrate({ readinessDelayMs: 300, hasExtensions: false }),
  ]);
});

afterAll(async () => {
  await Promise.all(adapters.map((a) => a.close()));
  await Promise.all([withWait?.cleanup(), hostedLike?.cleanup()]);
});

describe("waitForFiles", () => {
  it("on the local substrate, resolves when the file appears — long before the polling interval it was given", async () => {
    const adapter = await adapterFor(withWait);
    const id = await readyMachine(adapter, "wait-files");
    const started = Date.now();
    setTimeout(() => void adapter.upload(id, "/tmp/relay/outbox/000001.json", Buffer.from("{}")), 300);
    // A sleeping fallback would take pollMs (60 s) and fail this test by its timeout.
    await adapter.waitForFiles(id, ["/tmp/relay/outbox/000001.json", "/tmp/school-core-output/done.json"], {
      timeoutMs: 20_000,
      pollMs: 60_000,
    });
    expect(Date.now() - started).toBeLessThan(15_000);
    expect(await adapter.downloadSmall(id, "/tmp/relay/outbox/000001.json", { maxBytes: 16 })).toEqual(
      Buffer.from("{}"),
    );
  });

  it("on the local substrate, resolves after its timeout when nothing appears (bounded)", async () => {
    const adapter = await adapterFor(withWait);
    const id = await readyMachine(adapter, "wait-bounded");
    const started = Date.now();
    await adapter.waitForFiles(id, ["/tmp/nothing.json"], { timeoutMs: 700, pollMs: 60_000 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(690);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("against the hosted API's routes only, falls back to its polling interval: it sleeps pollMs, not the timeout", async () => {
    const adapter = await adapterFor(hostedLike);
    const id = await readyMachine(adapter, "wait-fallback");
    const started = Date.now();
    // A long poll would hold for the 60 s timeout and fail this test by its own.
    await adapter.waitForFiles(id, ["/tmp/nothing.json"], { timeoutMs: 60_000, pollMs: 200 });
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it("when the long poll fails (an injected 500 or reset), falls back to its polling interval", async () => {
    const adapter = await adapterFor(withWait);
    const id = await readyMachine(adapter, "wait-fault");
    for (const kind of ["http500", "reset", "malformed_json"]) {
      await withWait.admin("POST", "/admin/faults", { verb: "wait", kind, count: 1 });
      const started = Date.now();
      await adapter.waitForFiles(id, ["/tmp/nothing.json"], { timeoutMs: 60_000, pollMs: 200 });
      expect(Date.now() - started, kind).toBeLessThan(15_000);
    }
    const faults = await withWait.admin("GET", "/admin/faults");
    expect((faults.json as { faults: unknown[] }).faults).toHaveLength(0);
  });
});

describe("waitReady", () => {
  it("is right with the long poll, without it, and when the long poll fails", async () => {
    const local = await adapterFor(withWait);
    const hosted = await adapterFor(hostedLike);
    await readyMachine(local, "ready-long-poll");
    await readyMachine(hosted, "ready-polling");
    await withWait.admin("POST", "/admin/faults", { verb: "wait", kind: "http500", count: 1 });
    await readyMachine(local, "ready-after-fault");
    // the failed long poll was really tried (and the adapter then polled)
    expect(((await withWait.admin("GET", "/admin/faults")).json as { faults: unknown[] }).faults).toHaveLength(0);
  });

  it("still fails a machine that cannot become ready (stopped), with the long poll and without", async () => {
    for (const s of [withWait, hostedLike]) {
      const adapter = await adapterFor(s);
      const machine = await adapter.create({
        name: `never-started-${Date.now()}`,
        source: { type: "smolmachine", reference: DEFAULT_GUEST_IMAGE },
        resources: { cpus: 1, memoryMb: 256, diskGb: 1 },
        network: { mode: "blocked" },
        ttlSeconds: 600,
      });
      await expect(adapter.waitReady(machine.id, { timeoutMs: 5_000, pollMs: 100 })).rejects.toMatchObject({
        substrateCode: "SUBSTRATE_MACHINE_FAILED",
      });
    }
  });
});
