/**
 * A substrate killed before stop() leaves machine roots and empty cgroups behind. The next start
 * removes those of dead owners and never touches those of a live one.
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createCgroupRoot, removeCgroupRoot } from "./cgroups";
import { makeTestDataDir, startTestSubstrate } from "./testing/local-substrate-fixture";

let dataDir: string;
let deadPid: number;

beforeAll(async () => {
  dataDir = await makeTestDataDir();
  deadPid = spawnSync("/bin/true").pid!; // exited and reaped: nobody runs under this pid now
});

afterAll(async () => {
  await fs.rm(dataDir, { recursive: true, force: true });
});

async function fakeRoot(owner: number | undefined): Promise<string> {
  const id = `mach-${randomBytes(16).toString("hex")}`;
  const dir = path.join(dataDir, "substrate", "machines", id);
  await fs.mkdir(path.join(dir, "workspace"), { recursive: true });
  if (owner !== undefined) await fs.writeFile(path.join(dir, "owner-pid"), String(owner));
  return id;
}

describe("crash recovery", () => {
  it("removes machine roots whose substrate died, keeps those of a live one", async () => {
    const dead = await fakeRoot(deadPid);
    const unowned = await fakeRoot(undefined);
    const live = await fakeRoot(process.pid);
    const sub = await startTestSubstrate({ dataDir });
    try {
      const roots = await fs.readdir(path.join(dataDir, "substrate", "machines"));
      expect(roots).toContain(live);
      expect(roots).not.toContain(dead);
      expect(roots).not.toContain(unowned);
    } finally {
      await sub.stop();
    }
  });

  it("removes the empty cgroups of a dead instance, not those of a live one", async () => {
    const probe = await createCgroupRoot();
    if (!probe.pids) {
      await removeCgroupRoot(probe);
      return; // no writable pids controller on this host: nothing to leave behind
    }
    const parent = path.dirname(probe.pids);
    await removeCgroupRoot(probe);
    const stale = path.join(parent, `school-core-substrate-${deadPid}-deadbeef`);
    const alive = path.join(parent, `school-core-substrate-${process.pid}-cafebabe`);
    await fs.mkdir(path.join(stale, `mach-${"a".repeat(32)}`), { recursive: true });
    await fs.mkdir(alive);
    try {
      const root = await createCgroupRoot();
      await removeCgroupRoot(root);
      await expect(fs.stat(stale)).rejects.toThrow();
      expect((await fs.stat(alive)).isDirectory()).toBe(true);
    } finally {
      await fs.rmdir(alive).catch(() => undefined);
      await fs.rm(path.join(stale, `mach-${"a".repeat(32)}`), { recursive: true, force: true }).catch(() => undefined);
      await fs.rmdir(stale).catch(() => undefined);
    }
  });
});
