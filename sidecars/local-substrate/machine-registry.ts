/**
 * The machines of the local substrate and their lifecycle: create (bounded by the quotas and, under
 * a hard budget, by the account), start, stop, delete, the TTL sweep and shutdown. A machine past
 * its TTL is gone for every caller at once, even before the sweeper runs; a deleted machine leaves
 * every view at once, then its processes, relay, cgroup and root are cleaned up in the background
 * (a failed cleanup stays visible to the admin API rather than being forgotten).
 */
import { randomBytes, randomInt } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { logError, logInfo } from "../../lib/log";
import { sanitizeExcerpt } from "../../lib/redact";
import type { AccountLedger } from "./account-ledger";
import { MachineCgroup, type TCgroupRoot } from "./cgroups";
import type { TClock } from "./clock";
import {
  isMachineExpired,
  MACHINE_ID_PATTERN,
  runSerialized,
  type TMachine,
  type TSubstrateLimits,
} from "./machine-record";
import { createMachineRoots } from "./machine-roots";
import { probeDiskMode, releaseMachineDisk } from "./machine-disk";
import { closeMachineRelay, prepareMachineStart } from "./machine-start";
import { machineAdminView, machineInfoView, usageReportView, type TMachineAdminView } from "./machine-views";
import type { TSubstrateDirs } from "./substrate-dirs";
import { WireError } from "./wire-error";
import type { TLocalMachineInfo, TLocalUsageReport } from "./wire-responses";
import { describeZodError, ZCreateMachineRequestSchema, type TMachineNetwork } from "./wire-schemas";

const MIN_MEMORY_MB = 64;
/** Per-machine host uids are drawn from here; far above any real account, distinct per machine. */
const HOST_UID_BASE = 0x60000000;
const HOST_UID_SPAN = 0x0fffffff;

type TDeleteReason = "api" | "ttl" | "shutdown";

export type TMachineRegistryOptions = {
  dirs: TSubstrateDirs;
  dataDir: string;
  clock: TClock;
  limits: TSubstrateLimits;
  readinessDelayMs: number;
  cgroupRoot: TCgroupRoot;
  /** Ports of our own servers, which a relay target may never point at. */
  ownPorts: () => number[];
  ledger: AccountLedger;
  isQuiet: boolean;
  /** test-only weakening (weakening.ts): the TTL is recorded but never enforced */
  isTtlIgnored?: () => boolean;
};

export type TMachinesSnapshot = {
  machineCount: number;
  runningCommandCount: number;
  pendingCleanups: number;
  /** Machine roots on disk that belong to no live machine. */
  leftoverRoots: string[];
  cleanupFailures: { machineId: string; error: string }[];
  machines: TMachineAdminView[];
};

export class MachineRegistry {
  readonly #machines = new Map<string, TMachine>();
  /** names of creates still between their checks and their registration */
  readonly #creatingNames = new Set<string>();
  readonly #cleanups = new Set<Promise<void>>();
  readonly #cleanupFailures: { machineId: string; error: string }[] = [];
  #isShuttingDown = false;

  constructor(private readonly options: TMachineRegistryOptions) {}

  #log(message: string, fields?: Record<string, unknown>): void {
    if (!this.options.isQuiet) logInfo(`local substrate: ${message}`, fields);
  }

  #info(machine: TMachine): TLocalMachineInfo {
    return machineInfoView(machine, { now: this.options.clock.now(), readinessDelayMs: this.options.readinessDelayMs });
  }

  #touch(machine: TMachine): void {
    machine.updatedAtMs = this.options.clock.now();
  }

  /** Every live machine (the account meters them); a machine past its TTL may still be here until swept. */
  machines(): IterableIterator<TMachine> {
    return this.#machines.values();
  }

  /** The machine, unless it is unknown or past its TTL (then it is deleted now): NOT_FOUND. */
  getLive(id: string): TMachine {
    const machine = MACHINE_ID_PATTERN.test(id) ? this.#machines.get(id) : undefined;
    if (!machine) throw new WireError("NOT_FOUND", `machine ${id.slice(0, 80)} not found`);
    if (this.#isExpired(machine, this.options.clock.now())) {
      void this.#delete(machine, "ttl");
      throw new WireError("NOT_FOUND", `machine ${id} not found`);
    }
    return machine;
  }

  async create(body: unknown): Promise<TLocalMachineInfo> {
    if (this.#isShuttingDown) throw new WireError("UNAVAILABLE", "the local substrate is shutting down");
    const parsed = ZCreateMachineRequestSchema.safeParse(body);
    if (!parsed.success) throw new WireError("BAD_REQUEST", describeZodError(parsed.error));
    const request = parsed.data;
    const { limits, clock, ledger } = this.options;
    const resources = {
      cpus: request.resources?.cpus ?? 1,
      memoryMb: request.resources?.memoryMb ?? 512,
      diskGb: request.resources?.diskGb ?? 1,
      maxProcesses: Math.min(limits.maxProcesses, request.resources?.maxProcesses ?? limits.maxProcesses),
    };
    if (resources.memoryMb < MIN_MEMORY_MB)
      throw new WireError("BAD_REQUEST", `resources.memoryMb must be at least ${MIN_MEMORY_MB}`);
    if (
      resources.cpus > limits.maxCpus ||
      resources.memoryMb > limits.maxMemoryMb ||
      resources.diskGb > limits.maxDiskGb
    ) {
      throw new WireError(
        "QUOTA_EXCEEDED",
        `quota exceeded: at most ${limits.maxCpus} cpus, ${limits.maxMemoryMb} MB memory and ${limits.maxDiskGb} GB disk per machine`,
      );
    }
    if (this.#machines.size >= limits.maxMachines)
      throw new WireError("QUOTA_EXCEEDED", `quota exceeded: at most ${limits.maxMachines} machines`);
    if (ledger.isBudgetExhausted(this.#machines.values(), clock.now()))
      throw new WireError("QUOTA_EXCEEDED", "quota exceeded: the account's budget is exhausted (hard budget policy)");
    if (
      request.name &&
      (this.#creatingNames.has(request.name) || [...this.#machines.values()].some((m) => m.name === request.name))
    )
      throw new WireError("CONFLICT", `a machine named "${request.name}" already exists`);
    // Vendor sources disagree on the default; the local substrate fails closed to "blocked".
    const network: TMachineNetwork = request.network
      ? {
          mode: request.network.mode,
          ...(request.network.cidrs ? { cidrs: request.network.cidrs } : {}),
          ...(request.network.hosts ? { hosts: request.network.hosts } : {}),
        }
      : { mode: "blocked" };
    if (network.mode === "allowCidrs" && (network.cidrs?.length ?? 0) + (network.hosts?.length ?? 0) === 0)
      throw new WireError("BAD_REQUEST", "network mode allowCidrs requires at least one CIDR or host");

    const id = `mach-${randomBytes(16).toString("hex")}`;
    const usedUids = new Set([...this.#machines.values()].map((m) => m.hostUid));
    let hostUid = HOST_UID_BASE + randomInt(HOST_UID_SPAN);
    while (usedUids.has(hostUid)) hostUid = HOST_UID_BASE + randomInt(HOST_UID_SPAN);
    const dir = path.join(this.options.dirs.machines, id);
    const now = clock.now();
    const machine: TMachine = {
      id,
      name: request.name ?? null,
      source: { type: request.source.type, reference: request.source.reference, arch: request.source.arch ?? null },
      resources,
      network,
      env: request.env ?? {},
      workdir: request.workdir ?? null,
      ttlSeconds: request.ttlSeconds ?? null,
      autoStopSeconds: request.autoStopSeconds ?? null,
      ephemeral: request.ephemeral ?? false,
      state: "stopped",
      error: null,
      createdAtMs: now,
      updatedAtMs: now,
      startedAtMs: null,
      lastActivityAtMs: null,
      hostUid,
      dir,
      image: undefined,
      relay: undefined,
      cgroup: undefined,
      processes: new Set(),
      execCount: 0,
      chain: Promise.resolve(),
    };
    // The name is taken from here on: two creates with one name racing through the awaits below
    // must not both succeed (a name is how the control plane finds a machine whose answer it lost).
    if (request.name) this.#creatingNames.add(request.name);
    try {
      await createMachineRoots(dir, hostUid, { diskGb: resources.diskGb, mode: await probeDiskMode() });
      machine.cgroup = await MachineCgroup.create(this.options.cgroupRoot, id, {
        maxProcesses: resources.maxProcesses,
        memoryBytes: resources.memoryMb * 1024 * 1024,
        cpus: resources.cpus,
      });
    } catch (error) {
      await machine.cgroup?.remove().catch(() => undefined);
      await releaseMachineDisk(dir).catch(() => undefined);
      await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
      throw error;
    } finally {
      if (request.name) this.#creatingNames.delete(request.name);
    }
    this.#machines.set(id, machine);
    ledger.recordCreated();
    this.#log("machine created", { machineId: id, source: machine.source.reference });
    return this.#info(machine);
  }

  list(): TLocalMachineInfo[] {
    const now = this.options.clock.now();
    const live: TLocalMachineInfo[] = [];
    for (const machine of this.#machines.values()) {
      if (this.#isExpired(machine, now)) void this.#delete(machine, "ttl");
      else live.push(this.#info(machine));
    }
    return live;
  }

  get(id: string): TLocalMachineInfo {
    return this.#info(this.getLive(id));
  }

  async start(id: string): Promise<TLocalMachineInfo> {
    const machine = this.getLive(id);
    return runSerialized(machine, async () => {
      if (!this.#machines.has(machine.id)) throw new WireError("NOT_FOUND", `machine ${id} not found`);
      if (machine.state === "started") return this.#info(machine);
      try {
        await prepareMachineStart(
          {
            dataDir: this.options.dataDir,
            runDir: this.options.dirs.run,
            relayMaxConnections: this.options.limits.relayMaxConnections,
            ownPorts: this.options.ownPorts,
          },
          machine,
        );
      } catch (error) {
        if (error instanceof WireError) {
          machine.state = "error";
          machine.error = `start failed: ${error.message}`;
          this.#touch(machine);
        }
        throw error;
      }
      machine.state = "started";
      machine.error = null;
      machine.startedAtMs = this.options.clock.now();
      this.#touch(machine);
      this.#log("machine started", { machineId: machine.id, image: machine.image?.digest ?? "" });
      return this.#info(machine);
    });
  }

  async stop(id: string): Promise<TLocalMachineInfo> {
    const machine = this.getLive(id);
    return runSerialized(machine, async () => {
      await this.#killProcesses(machine, "stopped");
      await closeMachineRelay(machine);
      machine.state = "stopped";
      machine.startedAtMs = null;
      this.#touch(machine);
      return this.#info(machine);
    });
  }

  /** The usage report with `includeUsage` (`{}` when a concurrent caller deleted it first). */
  async delete(
    id: string,
    options: { includeUsage: boolean },
  ): Promise<TLocalUsageReport | Record<string, never> | undefined> {
    const machine = this.getLive(id);
    const report = await this.#delete(machine, "api");
    return options.includeUsage ? report : undefined;
  }

  /** Deletes every machine past its TTL; returns their ids. */
  #isExpired(machine: TMachine, now: number): boolean {
    return !this.options.isTtlIgnored?.() && isMachineExpired(machine, now);
  }

  async sweep(): Promise<string[]> {
    const now = this.options.clock.now();
    const expired = [...this.#machines.values()].filter((m) => this.#isExpired(m, now));
    await Promise.all(expired.map((m) => this.#delete(m, "ttl")));
    return expired.map((m) => m.id);
  }

  /** Admin: every live machine with its counts, and whatever deletion left behind. */
  async snapshot(): Promise<TMachinesSnapshot> {
    const now = this.options.clock.now();
    const machines = await Promise.all([...this.#machines.values()].map((m) => machineAdminView(m, now)));
    const leftoverRoots = (await fs.readdir(this.options.dirs.machines).catch(() => [] as string[])).filter(
      (name) => !this.#machines.has(name),
    );
    return {
      machineCount: machines.length,
      runningCommandCount: machines.reduce((sum, m) => sum + m.runningCommands, 0),
      pendingCleanups: this.#cleanups.size,
      leftoverRoots,
      cleanupFailures: [...this.#cleanupFailures],
      machines,
    };
  }

  /** Refuses new machines, deletes every live one and waits for every cleanup. */
  async shutdown(): Promise<void> {
    this.#isShuttingDown = true;
    await Promise.all([...this.#machines.values()].map((m) => this.#delete(m, "shutdown")));
    await Promise.all([...this.#cleanups]);
  }

  async #killProcesses(machine: TMachine, reason: "stopped" | "deleted" | "shutdown"): Promise<void> {
    const running = [...machine.processes];
    for (const process of running) process.kill(reason);
    await Promise.all(running.map((p) => p.done));
    // Anything that outlived its sandbox (should be nothing) goes with the cgroup.
    await machine.cgroup?.killAll();
  }

  /**
   * Removes a machine at once from every view, then kills its processes and removes its root.
   * A machine already deleted by a concurrent caller resolves to an empty report.
   */
  #delete(machine: TMachine, reason: TDeleteReason): Promise<TLocalUsageReport | Record<string, never>> {
    if (!this.#machines.delete(machine.id)) return Promise.resolve({});
    const now = this.options.clock.now();
    const report = usageReportView(machine, this.options.ledger.recordDeleted(machine, now), now);
    const cleanup = runSerialized(machine, async () => {
      await this.#killProcesses(machine, reason === "shutdown" ? "shutdown" : "deleted");
      await closeMachineRelay(machine);
      await machine.cgroup?.remove();
      await releaseMachineDisk(machine.dir);
      await fs.rm(machine.dir, { recursive: true, force: true });
    })
      .catch((error: unknown) => {
        // A failed cleanup is visible (admin API) rather than silently forgotten.
        this.#cleanupFailures.push({ machineId: machine.id, error: sanitizeExcerpt(String(error), 512) });
        logError("local substrate: machine cleanup failed", error, { machineId: machine.id });
      })
      .finally(() => this.#cleanups.delete(cleanup));
    this.#cleanups.add(cleanup);
    this.#log(reason === "ttl" ? "machine deleted by TTL" : "machine deleted", { machineId: machine.id });
    return cleanup.then(() => report);
  }
}
