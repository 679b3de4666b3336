/**
 * The probe program's canary search (guest/probe.mjs), run as a plain Node process on a canary
 * written for the test: what it reports when it read everything, and when it was cut before it
 * read the mount points (P3 then fails closed: lib/probes/p3-host-canaries.ts).
 */
import { execFile } from "node:child_process";
import { createHash } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";

const PROBE = path.join(import.meta.dirname, "probe.mjs");
const CANARY = "schoolcore-test-canary-0123456789abcdef";
let dir: string;

beforeAll(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), "probe-canary-search-"));
  await fs.writeFile(path.join(dir, "planted.txt"), `before ${CANARY} after\n`);
});
afterAll(() => fs.rm(dir, { recursive: true, force: true }));

async function search(timeMs: number, roots: string[]) {
  const input = path.join(dir, `input-${timeMs}.json`);
  const digest = createHash("sha256").update(CANARY).digest("hex");
  const spec = { pattern: "schoolcore-test-canary-[0-9a-f]{16}", digests: [digest], timeMs, roots, maxFiles: 1000 };
  await fs.writeFile(input, JSON.stringify({ canaries: { ...spec, maxTotalBytes: 1 << 20, maxBytesPerFile: 4096 } }));
  const { stdout } = await promisify(execFile)(process.execPath, [PROBE, input], { cwd: dir });
  return JSON.parse(stdout).canaries as { found: { where: string }[]; isCut: boolean; mountsUnsearched: number };
}

describe("the probe's canary search", () => {
  it("finds a planted canary in a root it reads through", async () => {
    const result = await search(10_000, [dir]);
    expect(result.found.map((f) => f.where)).toContain(path.join(dir, "planted.txt"));
    expect(result.isCut).toBe(false);
    expect(result.mountsUnsearched).toBe(0);
  });

  it("says how many mount points it never read when it is cut before them", async () => {
    const result = await search(-1, ["@mounts", dir]);
    expect(result.isCut).toBe(true);
    expect(result.found).toEqual([]);
    expect(result.mountsUnsearched).toBeGreaterThan(0);
  });
});
