/**
 * The local long poll (machine-wait.ts, issue 29) on a real local substrate over real HTTP: it
 * answers as soon as a guest file appears or the machine becomes ready — not at the end of its
 * timeout — and, when nothing happens, exactly once its bounded timeout has passed; it never
 * follows a guest's symlink, and a substrate started without extensions does not serve it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_GUEST_IMAGE } from "./default-guest-image";
import { startTestSubstrate, type TTestSubstrate } from "./testing/local-substrate-fixture";

let sub: TTestSubstrate;
let plain: TTestSubstrate;

beforeAll(async () => {
  [sub, plain] = await Promise.all([
    startTestSubstrate({ readinessDelayMs: 600 }),
    startTestSubstrate({ readinessDelayMs: 100, hasExtensions: false }),
  ]);
});

afterAll(async () => {
  await Promise.all([sub?.cleanup(), plain?.cleanup()]);
});

type TWait = { machine: { ready: boolean; state: string }; present: string[]; timedOut: boolean };

async function timedWait(s: TTestSubstrate, id: string, body: Record<string, unknown>) {
  const started = Date.now();
  const result = await s.api("POST", `/v1/machines/${id}/wait`, body);
  return { ...result, ms: Date.now() - started, answer: result.json as TWait };
}

describe("POST /v1/machines/{id}/wait", () => {
  it("lists itself in GET /v1/extensions", async () => {
    const result = await sub.api("GET", "/v1/extensions");
    expect(result.status).toBe(200);
    expect(result.json).toEqual({ extensions: ["wait"] });
  });

  it("answers as soon as the guest writes one of the files, however deep its directory is made", async () => {
    const id = await sub.startMachine();
    // the guest makes the directory and the file 700 ms from now, in the background
    const exec = await sub.exec(id, {
      command: ["sh", "-c", "sleep 0.7; mkdir -p /tmp/out/deeper && echo done > /tmp/out/deeper/done.json"],
      background: true,
      timeoutSeconds: 30,
    });
    expect(exec.status).toBe(200);
    const waited = await timedWait(sub, id, {
      files: ["/tmp/never.json", "/tmp/out/deeper/done.json"],
      timeoutMs: 20_000,
    });
    expect(waited.status).toBe(200);
    expect(waited.answer).toMatchObject({ present: ["/tmp/out/deeper/done.json"], timedOut: false });
    // woken by the file, not by the 20 s timeout (the 1 s safety re-check would also be well under it)
    expect(waited.ms).toBeLessThan(10_000);
    const download = await sub.api("GET", `/v1/machines/${id}/files/tmp/out/deeper/done.json`);
    expect(download.text).toBe("done\n");
  });

  it("answers at once when a file is already there, and for an upload made while it waits", async () => {
    const id = await sub.startMachine();
    await sub.api("PUT", `/v1/machines/${id}/files/tmp/already.txt`, "x");
    const at = await timedWait(sub, id, { files: ["/tmp/already.txt"], timeoutMs: 20_000 });
    expect(at.answer.present).toEqual(["/tmp/already.txt"]);
    const pending = timedWait(sub, id, { files: ["/tmp/later.txt"], timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 300));
    await sub.api("PUT", `/v1/machines/${id}/files/tmp/later.txt`, "y");
    const later = await pending;
    expect(later.answer).toMatchObject({ present: ["/tmp/later.txt"], timedOut: false });
    expect(later.ms).toBeLessThan(10_000);
  });

  it("times out bounded: nothing appears, it answers timedOut once timeoutMs has passed", async () => {
    const id = await sub.startMachine();
    const waited = await timedWait(sub, id, { files: ["/tmp/nothing-here.json"], timeoutMs: 800 });
    expect(waited.status).toBe(200);
    expect(waited.answer).toMatchObject({ present: [], timedOut: true, machine: { ready: true } });
    expect(waited.ms).toBeGreaterThanOrEqual(790);
    expect(waited.ms).toBeLessThan(8_000);
  });

  it("answers untilReady when the machine becomes ready, not before and not at the timeout", async () => {
    const created = await sub.api("POST", "/v1/machines", {
      source: { type: "smolmachine", reference: DEFAULT_GUEST_IMAGE },
      network: { mode: "blocked" },
      resources: { cpus: 1, memoryMb: 256 },
    });
    const id = (created.json as { id: string }).id;
    expect((await sub.api("POST", `/v1/machines/${id}/start`)).status).toBe(200);
    const waited = await timedWait(sub, id, { untilReady: true, timeoutMs: 20_000 });
    expect(waited.answer.machine).toMatchObject({ ready: true, state: "started" });
    expect(waited.answer.timedOut).toBe(false);
    expect(waited.ms).toBeLessThan(10_000);
    // a stopped machine will not become ready by waiting: answered at once, not ready
    const stopped = await sub.api("POST", "/v1/machines", {
      source: { type: "smolmachine", reference: DEFAULT_GUEST_IMAGE },
    });
    const idle = await timedWait(sub, (stopped.json as { id: string }).id, { untilReady: true, timeoutMs: 20_000 });
    expect(idle.answer.machine).toMatchObject({ ready: false, state: "stopped" });
    expect(idle.ms).toBeLessThan(10_000);
  });

  it("never follows a guest's symlink: a file behind a link to a host directory is not present", async () => {
    const id = await sub.startMachine();
    await sub.exec(id, { command: ["ln", "-s", "/etc", "/tmp/hostlink"], timeoutSeconds: 10 });
    const waited = await timedWait(sub, id, {
      files: ["/tmp/hostlink/hostname", "/tmp/hostlink/passwd"],
      timeoutMs: 500,
    });
    expect(waited.answer).toMatchObject({ present: [], timedOut: true });
  });

  it("answers 404 when the machine is deleted while it waits", async () => {
    const id = await sub.startMachine();
    const pending = timedWait(sub, id, { files: ["/tmp/never.json"], timeoutMs: 20_000 });
    await new Promise((r) => setTimeout(r, 300));
    expect((await sub.api("DELETE", `/v1/machines/${id}`)).status).toBeLessThan(300);
    const waited = await pending;
    expect(waited.status).toBe(404);
    expect(waited.ms).toBeLessThan(10_000);
  });

  it("refuses a timeout over 30 s, more than 8 files and a path outside the writable roots", async () => {
    const id = await sub.startMachine();
    for (const body of [
      { timeoutMs: 30_001 },
      { files: Array.from({ length: 9 }, (_, i) => `/tmp/f${i}`), timeoutMs: 10 },
      { files: ["/etc/passwd"], timeoutMs: 10 },
      { files: ["/tmp/../etc/passwd"], timeoutMs: 10 },
      { timeoutMs: 10, extra: true },
    ]) {
      const result = await sub.api("POST", `/v1/machines/${id}/wait`, body);
      expect(result.status, JSON.stringify(body)).toBe(400);
    }
  });

  it("is not served by a substrate started without extensions, which answers like the hosted API (404)", async () => {
    const id = await plain.startMachine();
    expect((await plain.api("GET", "/v1/extensions")).status).toBe(404);
    expect((await plain.api("POST", `/v1/machines/${id}/wait`, { timeoutMs: 10 })).status).toBe(404);
  });
});
