/**
 * cgroup v1 `pids`, `memory` and `cpu` groups per machine (cpu: the CFS quota of its cpus). We run as root, and RLIMIT_NPROC is not
 * enforced for uid 0 — the guest runs as an unprivileged uid with RLIMIT_NPROC anyway, and on top
 * of that every process of a machine is put in `<own cgroup>/school-core-substrate-…/<machine>`
 * with `pids.max` and `memory.limit_in_bytes`, so a fork bomb and a memory hog are stopped by the
 * kernel whatever the uid accounting does. The groups are created under this process's own
 * cgroup, so the host's limits on us still bound the guests.
 *
 * When a controller is not writable (no cgroup v1, read-only /sys), that limit falls back to an
 * rlimit (see `limitsMode`); the admin API reports which is in force.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { isProcessAlive } from "../../lib/system/process-alive";

export type TCgroupController = "pids" | "memory" | "cpu";

export type TCgroupRoot = { pids: string | undefined; memory: string | undefined; cpu?: string | undefined };

/** CFS period for cpu.cfs_quota_us (the v1 spelling of cpu.max): quota = cpus × period. */
const CPU_PERIOD_US = 100_000;

function isErrno(error: unknown, ...codes: string[]): boolean {
  return typeof error === "object" && error !== null && codes.includes((error as NodeJS.ErrnoException).code ?? "");
}

async function ownCgroupPath(controller: TCgroupController): Promise<string | undefined> {
  const text = await fs.readFile("/proc/self/cgroup", "utf8").catch(() => "");
  for (const line of text.split("\n")) {
    const [, controllers, cgroupPath] = line.split(":");
    if (controllers?.split(",").includes(controller) && cgroupPath !== undefined) return cgroupPath;
  }
  return undefined;
}

/**
 * Removes the groups of substrate instances whose process is gone (killed before `stop()`).
 * Only empty groups are removed — rmdir refuses a group that still has tasks — so nothing alive
 * is touched; a live instance's groups are skipped by pid.
 */
async function removeStaleInstanceGroups(parent: string): Promise<void> {
  for (const name of await fs.readdir(parent).catch(() => [] as string[])) {
    const match = /^school-core-substrate-(\d+)-[0-9a-f]+$/.exec(name);
    if (!match || isProcessAlive(Number(match[1]))) continue;
    const instance = path.join(parent, name);
    for (const child of await fs.readdir(instance, { withFileTypes: true }).catch(() => [])) {
      if (child.isDirectory()) await fs.rmdir(path.join(instance, child.name)).catch(() => undefined);
    }
    await fs.rmdir(instance).catch(() => undefined);
  }
}

/** Creates this instance's parent group in each controller it can write; undefined where it cannot. */
export async function createCgroupRoot(): Promise<TCgroupRoot> {
  const name = `school-core-substrate-${process.pid}-${randomBytes(4).toString("hex")}`;
  const make = async (controller: TCgroupController): Promise<string | undefined> => {
    const own = await ownCgroupPath(controller);
    if (own === undefined) return undefined;
    await removeStaleInstanceGroups(path.join("/sys/fs/cgroup", controller, own));
    const dir = path.join("/sys/fs/cgroup", controller, own, name);
    try {
      await fs.mkdir(dir);
      await fs.access(path.join(dir, "cgroup.procs"), fs.constants.W_OK);
      return dir;
    } catch {
      await fs.rmdir(dir).catch(() => undefined);
      return undefined;
    }
  };
  return { pids: await make("pids"), memory: await make("memory"), cpu: await make("cpu") };
}

export async function removeCgroupRoot(root: TCgroupRoot): Promise<void> {
  for (const dir of [root.pids, root.memory, root.cpu]) if (dir) await removeGroup(dir);
}

async function removeGroup(dir: string): Promise<void> {
  // rmdir fails with EBUSY while the last killed tasks are still exiting; retry briefly.
  for (let attempt = 0; attempt < 50; attempt++) {
    try {
      await fs.rmdir(dir);
      return;
    } catch (error) {
      if (isErrno(error, "ENOENT")) return;
      if (!isErrno(error, "EBUSY")) throw error;
      await new Promise((r) => setTimeout(r, 20));
    }
  }
}

async function readPids(procsFile: string): Promise<number[]> {
  const text = await fs.readFile(procsFile, "utf8").catch(() => "");
  return text
    .split("\n")
    .filter(Boolean)
    .map(Number)
    .filter((n) => Number.isInteger(n) && n > 0);
}

export class MachineCgroup {
  private constructor(
    readonly pidsDir: string | undefined,
    readonly memoryDir: string | undefined,
    private readonly maxProcesses: number,
    readonly cpuDir: string | undefined = undefined,
  ) {}

  static async create(
    root: TCgroupRoot,
    machineId: string,
    limits: { maxProcesses: number; memoryBytes: number; cpus?: number },
  ): Promise<MachineCgroup> {
    let pidsDir: string | undefined;
    let memoryDir: string | undefined;
    let cpuDir: string | undefined;
    if (root.cpu && limits.cpus !== undefined) {
      // CPU is bounded like on a VM with that many vCPUs: cpus × the CFS period per period.
      cpuDir = path.join(root.cpu, machineId);
      await fs.mkdir(cpuDir);
      await fs.writeFile(path.join(cpuDir, "cpu.cfs_period_us"), String(CPU_PERIOD_US));
      await fs.writeFile(path.join(cpuDir, "cpu.cfs_quota_us"), String(limits.cpus * CPU_PERIOD_US));
    }
    if (root.pids) {
      pidsDir = path.join(root.pids, machineId);
      await fs.mkdir(pidsDir);
      await fs.writeFile(path.join(pidsDir, "pids.max"), String(limits.maxProcesses));
    }
    if (root.memory) {
      memoryDir = path.join(root.memory, machineId);
      await fs.mkdir(memoryDir);
      await fs.writeFile(path.join(memoryDir, "memory.limit_in_bytes"), String(limits.memoryBytes));
      // No swap escape: memory+swap gets the same ceiling where swap accounting exists.
      await fs
        .writeFile(path.join(memoryDir, "memory.memsw.limit_in_bytes"), String(limits.memoryBytes))
        .catch(() => undefined);
    }
    return new MachineCgroup(pidsDir, memoryDir, limits.maxProcesses, cpuDir);
  }

  /** The cgroup.procs files a new guest process writes itself into before dropping privileges. */
  get procsFiles(): { pids: string | undefined; memory: string | undefined; cpu?: string | undefined } {
    return {
      pids: this.pidsDir && path.join(this.pidsDir, "cgroup.procs"),
      memory: this.memoryDir && path.join(this.memoryDir, "cgroup.procs"),
      cpu: this.cpuDir && path.join(this.cpuDir, "cgroup.procs"),
    };
  }

  /** The machine's CPU quota per period in µs (cpu.cfs_quota_us; the v1 spelling of cpu.max). */
  async cpuQuotaMicros(): Promise<number | undefined> {
    if (!this.cpuDir) return undefined;
    const text = await fs.readFile(path.join(this.cpuDir, "cpu.cfs_quota_us"), "utf8").catch(() => undefined);
    return text === undefined ? undefined : Number(text.trim());
  }

  /** Periods in which the machine was throttled at its CPU quota (cpu.stat nr_throttled). */
  async cpuThrottledPeriods(): Promise<number | undefined> {
    if (!this.cpuDir) return undefined;
    const text = await fs.readFile(path.join(this.cpuDir, "cpu.stat"), "utf8").catch(() => undefined);
    const match = text && /nr_throttled (\d+)/.exec(text);
    return match ? Number(match[1]) : undefined;
  }

  async processCount(): Promise<number> {
    const file = this.procsFiles.pids ?? this.procsFiles.memory;
    return file ? (await readPids(file)).length : 0;
  }

  /** Highest process count the kernel saw (pids.peak), when the kernel reports it. */
  async pidsPeak(): Promise<number | undefined> {
    if (!this.pidsDir) return undefined;
    const text = await fs.readFile(path.join(this.pidsDir, "pids.peak"), "utf8").catch(() => undefined);
    return text === undefined ? undefined : Number(text.trim());
  }

  /** How often a fork was refused by pids.max. */
  async pidsMaxEvents(): Promise<number | undefined> {
    if (!this.pidsDir) return undefined;
    const text = await fs.readFile(path.join(this.pidsDir, "pids.events"), "utf8").catch(() => undefined);
    const match = text && /max (\d+)/.exec(text);
    return match ? Number(match[1]) : undefined;
  }

  async oomKills(): Promise<number | undefined> {
    if (!this.memoryDir) return undefined;
    const text = await fs.readFile(path.join(this.memoryDir, "memory.oom_control"), "utf8").catch(() => undefined);
    const match = text && /oom_kill (\d+)/.exec(text);
    return match ? Number(match[1]) : undefined;
  }

  /**
   * SIGKILLs every task; forks are frozen first (pids.max 0) so a fork bomb cannot outrun the
   * loop, and the limit is restored after, so a stopped machine can start again.
   */
  async killAll(): Promise<void> {
    const pidsMax = this.pidsDir && path.join(this.pidsDir, "pids.max");
    if (pidsMax) await fs.writeFile(pidsMax, "0").catch(() => undefined);
    try {
      await this.#killLoop();
    } finally {
      if (pidsMax) await fs.writeFile(pidsMax, String(this.maxProcesses)).catch(() => undefined);
    }
  }

  async #killLoop(): Promise<void> {
    for (let round = 0; round < 100; round++) {
      const pids = [
        ...new Set([
          ...(this.procsFiles.pids ? await readPids(this.procsFiles.pids) : []),
          ...(this.procsFiles.memory ? await readPids(this.procsFiles.memory) : []),
        ]),
      ];
      if (pids.length === 0) return;
      for (const pid of pids) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
      await new Promise((r) => setTimeout(r, 10));
    }
  }

  async remove(): Promise<void> {
    await this.killAll();
    for (const dir of [this.pidsDir, this.memoryDir, this.cpuDir]) if (dir) await removeGroup(dir);
  }
}
