/**
 * The provider behind the wire: machines, their lifecycle, exec, files, TTL and billing. State
 * lives in memory (plus each machine's roots on disk); `shutdown()` kills every live machine and
 * removes its root. Nothing here knows about HTTP beyond throwing WireError with the vendor's
 * codes and returning vendor-shaped objects.
 */
import { randomBytes, randomInt } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { logError, logInfo, logWarn } from "../../lib/log";
import { sanitizeExcerpt } from "../../lib/redact";
import { accountMoney, addMeters, meterMachine, ZERO_METER, type TBillingRates, type TBudgetPolicy, type TMachineMeter } from "./billing";
import { MachineCgroup, type TCgroupRoot } from "./cgroups";
import { isoOf, type OffsetClock } from "./clock";
import { guestRootDir, MAX_UPLOAD_BYTES, openGuestFile, parseGuestFilePath, writeGuestFile } from "./guest-files";
import { spawnGuestProcess, type TGuestProcess, type TGuestProcessResult } from "./guest-process";
import { resolveImage, type TResolvedImage } from "./images";
import { parseRelayTarget, startRelayForwarder, type TRelayForwarder } from "./relay-forwarder";
import { buildBwrapArgs, guestArgv, guestEnvironment } from "./sandbox-args";
import type { TSubstrateDirs } from "./substrate-dirs";
import { WireError } from "./wire-error";
import { describeZodError, ZCreateMachineRequestSchema, ZExecRequestSchema, type TExecOutputMode, type TMachineNetwork } from "./wire-schemas";

/** `GET /v1/account` status: says plainly that this is not a VM (never "active"). */
export const LOCAL_SUBSTRATE_ACCOUNT_STATUS = "local-substrate-not-a-vm";
/** Stamped into every machine's `source`. */
export const LOCAL_SUBSTRATE_SOURCE_KIND = "local-bubblewrap-sandbox-not-a-vm";

const MACHINE_ID = /^mach-[0-9a-f]{32}$/;
const MIN_MEMORY_MB = 64;
/** Per-machine host uids are drawn from here; far above any real account, distinct per machine. */
const HOST_UID_BASE = 0x60000000;
const HOST_UID_SPAN = 0x0fffffff;
const BACKGROUND_SETTLE_MS = 150;
/** Beside a machine's roots (never visible to the guest): the pid of the substrate that owns it. */
const OWNER_FILE = "owner-pid";

/**
 * Removes machine roots left by a substrate process that died without `stop()`. A root whose
 * owner is alive (another instance sharing this data directory) is never touched; a recycled pid
 * only means a leftover is kept, never that a live machine is removed.
 */
export async function removeOrphanedMachineRoots(machinesDir: string): Promise<string[]> {
  const removed: string[] = [];
  for (const name of await fs.readdir(machinesDir).catch(() => [] as string[])) {
    if (!MACHINE_ID.test(name)) continue;
    const owner = Number(await fs.readFile(path.join(machinesDir, name, OWNER_FILE), "utf8").catch(() => "0"));
    let isOwnerAlive = false;
    if (Number.isInteger(owner) && owner > 0) {
      try {
        process.kill(owner, 0);
        isOwnerAlive = true;
      } catch (error) {
        isOwnerAlive = (error as NodeJS.ErrnoException).code !== "ESRCH";
      }
    }
    if (isOwnerAlive) continue;
    await fs.rm(path.join(machinesDir, name), { recursive: true, force: true });
    removed.push(name);
  }
  return removed;
}

export type TSubstrateLimits = {
  maxMachines: number;
  maxCpus: number;
  maxMemoryMb: number;
  maxDiskGb: number;
  /** pids.max of a machine's cgroup and RLIMIT_NPROC of its uid. */
  maxProcesses: number;
  openFiles: number;
  /** RLIMIT_FSIZE ceiling (also capped by the machine's diskGb). */
  fileSizeBytes: number;
  defaultExecTimeoutSeconds: number;
  maxExecTimeoutSeconds: number;
  maxConcurrentExecsPerMachine: number;
  execOutputBytes: number;
  relayMaxConnections: number;
};

export type TBillingSettings = TBillingRates & {
  prepaidCreditMicros: number;
  lowBalanceThresholdMicros: number;
  budgetPolicy: TBudgetPolicy;
  /** Hard policy only; default = the initial prepaid credit. */
  monthlyBudgetMicros: number | null;
  freeCreditMicros: number;
};

type TMachineState = "stopped" | "started" | "error";
type TNetwork = { mode: TMachineNetwork["mode"]; cidrs?: string[]; hosts?: string[] };

type TMachine = {
  id: string;
  name: string | null;
  source: { type: "image" | "smolmachine"; reference: string; arch: string | null };
  resources: { cpus: number; memoryMb: number; diskGb: number };
  network: TNetwork;
  env: Record<string, string>;
  workdir: string | null;
  ttlSeconds: number | null;
  autoStopSeconds: number | null;
  ephemeral: boolean;
  state: TMachineState;
  error: string | null;
  createdAtMs: number;
  updatedAtMs: number;
  startedAtMs: number | null;
  lastActivityAtMs: number | null;
  hostUid: number;
  dir: string;
  image: TResolvedImage | undefined;
  relay: TRelayForwarder | undefined;
  cgroup: MachineCgroup | undefined;
  processes: Set<TGuestProcess>;
  execCount: number;
  /** Serializes start/stop/delete of one machine. */
  chain: Promise<unknown>;
};

export type TMachineServiceOptions = {
  dirs: TSubstrateDirs;
  dataDir: string;
  clock: OffsetClock;
  limits: TSubstrateLimits;
  billing: TBillingSettings;
  readinessDelayMs: number;
  cgroupRoot: TCgroupRoot;
  bwrapPath: string;
  tenantId: string;
  /** Ports of our own servers, which a relay target may never point at. */
  ownPorts: () => number[];
  isQuiet: boolean;
};

export type TExecResponse = {
  stdout: string;
  stderr: string;
  exitCode: number;
  durationMs: number;
  machineId: string;
  stdoutTruncated: boolean;
  stderrTruncated: boolean;
  stdoutB64?: string;
  stderrB64?: string;
  pid?: number;
  background?: boolean;
};

function hostArch(): string {
  return process.arch === "x64" ? "amd64" : process.arch;
}

function findingAMessage(reference: string): string {
  // Seed 001 finding A, verbatim in shape: what the vendor answers for a registry image with no network.
  return (
    `config operation failed: create machine: image '${reference}' must be pulled from a registry, but this machine has no network, ` +
    "so the pull can never succeed. Add --net (or publish a port with -p, or set an egress policy with --allow-cidr/--allow-host). " +
    `To keep the machine network-isolated, supply the image locally instead: \`docker save ${reference} | smolvm machine create --image -\``
  );
}

export class MachineService {
  readonly #machines = new Map<string, TMachine>();
  readonly #cleanups = new Set<Promise<void>>();
  readonly #cleanupFailures: { machineId: string; error: string }[] = [];
  readonly #startedAtMs: number;
  #periodMeter: TMachineMeter = ZERO_METER;
  #machinesCreated = 0;
  #initialCreditMicros: number;
  #isShuttingDown = false;

  constructor(private readonly options: TMachineServiceOptions) {
    this.#startedAtMs = options.clock.now();
    this.#initialCreditMicros = options.billing.prepaidCreditMicros;
  }

  get limitsMode(): { pids: "cgroup" | "rlimit"; memory: "cgroup" | "rlimit-data" } {
    return { pids: this.options.cgroupRoot.pids ? "cgroup" : "rlimit", memory: this.options.cgroupRoot.memory ? "cgroup" : "rlimit-data" };
  }

  #log(message: string, fields?: Record<string, unknown>): void {
    if (!this.options.isQuiet) logInfo(`local substrate: ${message}`, fields);
  }

  // ---------------------------------------------------------------- views

  #info(machine: TMachine): Record<string, unknown> {
    const now = this.options.clock.now();
    const readyAtMs = machine.state === "started" && machine.startedAtMs !== null ? machine.startedAtMs + this.options.readinessDelayMs : null;
    const isReady = readyAtMs !== null && now >= readyAtMs;
    return {
      id: machine.id,
      name: machine.name,
      source: {
        ...machine.source,
        substrate: LOCAL_SUBSTRATE_SOURCE_KIND,
        ...(machine.image ? { imageDigest: machine.image.digest } : {}),
      },
      state: machine.state,
      ready: isReady,
      readyAt: isReady ? isoOf(readyAtMs!) : null,
      error: machine.error,
      resources: machine.resources,
      network: machine.network,
      env: machine.env,
      ephemeral: machine.ephemeral,
      ttlSeconds: machine.ttlSeconds,
      autoStopSeconds: machine.autoStopSeconds,
      workdir: machine.workdir,
      arch: hostArch(),
      ports: [],
      url: null,
      lastActivityAt: machine.lastActivityAtMs === null ? null : isoOf(machine.lastActivityAtMs),
      createdAt: isoOf(machine.createdAtMs),
      updatedAt: isoOf(machine.updatedAtMs),
    };
  }

  #isExpired(machine: TMachine, now = this.options.clock.now()): boolean {
    return machine.ttlSeconds !== null && now >= machine.createdAtMs + machine.ttlSeconds * 1000;
  }

  /** A machine past its TTL is already gone for every caller, even before the sweeper runs. */
  #getLive(id: string): TMachine {
    const machine = MACHINE_ID.test(id) ? this.#machines.get(id) : undefined;
    if (!machine) throw new WireError("NOT_FOUND", `machine ${id.slice(0, 80)} not found`);
    if (this.#isExpired(machine)) {
      void this.#delete(machine, "ttl");
      throw new WireError("NOT_FOUND", `machine ${id} not found`);
    }
    return machine;
  }

  #touch(machine: TMachine): void {
    machine.updatedAtMs = this.options.clock.now();
  }

  #serialize<T>(machine: TMachine, body: () => Promise<T>): Promise<T> {
    const next = machine.chain.then(body, body);
    machine.chain = next.catch(() => undefined);
    return next;
  }

  // ---------------------------------------------------------------- machines

  async create(body: unknown): Promise<Record<string, unknown>> {
    if (this.#isShuttingDown) throw new WireError("UNAVAILABLE", "the local substrate is shutting down");
    const parsed = ZCreateMachineRequestSchema.safeParse(body);
    if (!parsed.success) throw new WireError("BAD_REQUEST", describeZodError(parsed.error));
    const request = parsed.data;
    const { limits } = this.options;
    const resources = { cpus: request.resources?.cpus ?? 1, memoryMb: request.resources?.memoryMb ?? 512, diskGb: request.resources?.diskGb ?? 1 };
    if (resources.memoryMb < MIN_MEMORY_MB) throw new WireError("BAD_REQUEST", `resources.memoryMb must be at least ${MIN_MEMORY_MB}`);
    if (resources.cpus > limits.maxCpus || resources.memoryMb > limits.maxMemoryMb || resources.diskGb > limits.maxDiskGb) {
      throw new WireError("QUOTA_EXCEEDED", `quota exceeded: at most ${limits.maxCpus} cpus, ${limits.maxMemoryMb} MB memory and ${limits.maxDiskGb} GB disk per machine`);
    }
    if (this.#machines.size >= limits.maxMachines) throw new WireError("QUOTA_EXCEEDED", `quota exceeded: at most ${limits.maxMachines} machines`);
    const account = this.#money();
    if (account.budgetRemainingMicros !== null && account.budgetRemainingMicros <= 0) throw new WireError("QUOTA_EXCEEDED", "quota exceeded: the account's budget is exhausted (hard budget policy)");
    if (request.name && [...this.#machines.values()].some((m) => m.name === request.name)) throw new WireError("CONFLICT", `a machine named "${request.name}" already exists`);
    // Vendor sources disagree on the default; the local substrate fails closed to "blocked".
    const network: TNetwork = request.network ? { mode: request.network.mode, ...(request.network.cidrs ? { cidrs: request.network.cidrs } : {}), ...(request.network.hosts ? { hosts: request.network.hosts } : {}) } : { mode: "blocked" };
    if (network.mode === "allowCidrs" && (network.cidrs?.length ?? 0) + (network.hosts?.length ?? 0) === 0) throw new WireError("BAD_REQUEST", "network mode allowCidrs requires at least one CIDR or host");

    const id = `mach-${randomBytes(16).toString("hex")}`;
    const usedUids = new Set([...this.#machines.values()].map((m) => m.hostUid));
    let hostUid = HOST_UID_BASE + randomInt(HOST_UID_SPAN);
    while (usedUids.has(hostUid)) hostUid = HOST_UID_BASE + randomInt(HOST_UID_SPAN);
    const dir = path.join(this.options.dirs.machines, id);
    const now = this.options.clock.now();
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
    try {
      await fs.mkdir(dir, { mode: 0o711 });
      await fs.writeFile(path.join(dir, OWNER_FILE), String(process.pid), { mode: 0o600 });
      for (const root of ["tmp", "workspace"] as const) {
        const rootDir = guestRootDir(dir, root);
        await fs.mkdir(rootDir, { mode: 0o700 });
        await fs.chown(rootDir, hostUid, hostUid);
      }
      machine.cgroup = await MachineCgroup.create(this.options.cgroupRoot, id, { maxProcesses: limits.maxProcesses, memoryBytes: resources.memoryMb * 1024 * 1024 });
    } catch (error) {
      await machine.cgroup?.remove().catch(() => undefined);
      await fs.rm(dir, { recursive: true, force: true }).catch(() => undefined);
      throw error;
    }
    this.#machines.set(id, machine);
    this.#machinesCreated += 1;
    this.#log("machine created", { machineId: id, source: machine.source.reference });
    return this.#info(machine);
  }

  list(): Record<string, unknown>[] {
    const now = this.options.clock.now();
    const live: Record<string, unknown>[] = [];
    for (const machine of this.#machines.values()) {
      if (this.#isExpired(machine, now)) void this.#delete(machine, "ttl");
      else live.push(this.#info(machine));
    }
    return live;
  }

  get(id: string): Record<string, unknown> {
    return this.#info(this.#getLive(id));
  }

  async start(id: string): Promise<Record<string, unknown>> {
    const machine = this.#getLive(id);
    return this.#serialize(machine, async () => {
      if (!this.#machines.has(machine.id)) throw new WireError("NOT_FOUND", `machine ${id} not found`);
      if (machine.state === "started") return this.#info(machine);
      try {
        await this.#prepareStart(machine);
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

  async #prepareStart(machine: TMachine): Promise<void> {
    const { network, source } = machine;
    // The local substrate never gives a guest the host network: fail closed rather than pretend.
    if (network.mode === "open") throw new WireError("BAD_REQUEST", 'network mode "open" is refused: the local substrate never gives a guest the host network; use "blocked", or "allowCidrs" with exactly one HOST:PORT to forward');
    if (source.type === "image") {
      if (network.mode === "blocked") throw new WireError("BAD_REQUEST", findingAMessage(source.reference));
      throw new WireError("BAD_REQUEST", `image '${source.reference}' is not cached and the local substrate cannot pull from a registry; register it with \`schoolcore substrate image add\` and use a smolmachine source`);
    }
    const image = await resolveImage(this.options.dataDir, source.reference);
    if (!image) throw new WireError("BAD_REQUEST", `smolmachine '${source.reference}' not found: no local image is registered under that name or digest (see \`schoolcore substrate image list\`)`);
    machine.image = image;
    if (network.mode === "allowCidrs" && !machine.relay) {
      const parsed = parseRelayTarget(network);
      if (parsed.kind === "refused") throw new WireError("BAD_REQUEST", parsed.reason);
      const isLoopback = ["127.0.0.1", "localhost", "::1"].includes(parsed.target.host) || parsed.target.host.startsWith("127.");
      if (isLoopback && this.options.ownPorts().includes(parsed.target.port)) throw new WireError("BAD_REQUEST", "the relay target may not be the substrate's own API");
      const relayDir = await this.#relayDir(machine.id);
      machine.relay = await startRelayForwarder({ socketPath: path.join(relayDir, "relay.sock"), target: parsed.target, maxConnections: this.options.limits.relayMaxConnections, ownerUid: machine.hostUid });
    }
  }

  /** Unix socket paths are limited to 107 bytes; a long DATA_DIR falls back to a short private dir. */
  async #relayDir(machineId: string): Promise<string> {
    const short = machineId.slice(5, 17);
    let dir = path.join(this.options.dirs.run, short);
    if (Buffer.byteLength(path.join(dir, "relay.sock")) > 100) dir = await fs.mkdtemp("/tmp/school-core-relay-");
    else await fs.mkdir(dir, { recursive: true });
    await fs.chmod(dir, 0o711);
    return dir;
  }

  async stop(id: string): Promise<Record<string, unknown>> {
    const machine = this.#getLive(id);
    return this.#serialize(machine, async () => {
      await this.#killProcesses(machine, "stopped");
      await this.#closeRelay(machine);
      machine.state = "stopped";
      machine.startedAtMs = null;
      this.#touch(machine);
      return this.#info(machine);
    });
  }

  async #killProcesses(machine: TMachine, reason: "stopped" | "deleted" | "shutdown"): Promise<void> {
    const running = [...machine.processes];
    for (const process of running) process.kill(reason);
    await Promise.all(running.map((p) => p.done));
    // Anything that outlived its sandbox (should be nothing) goes with the cgroup.
    await machine.cgroup?.killAll();
  }

  async #closeRelay(machine: TMachine): Promise<void> {
    const relay = machine.relay;
    machine.relay = undefined;
    if (!relay) return;
    await relay.close();
    await fs.rm(path.dirname(relay.socketPath), { recursive: true, force: true });
  }

  async delete(id: string, options: { includeUsage: boolean }): Promise<Record<string, unknown> | undefined> {
    const machine = this.#getLive(id);
    const report = await this.#delete(machine, "api");
    return options.includeUsage ? report : undefined;
  }

  /** Removes a machine at once from every view, then kills its processes and removes its root. */
  #delete(machine: TMachine, reason: "api" | "ttl" | "shutdown"): Promise<Record<string, unknown>> {
    if (!this.#machines.delete(machine.id)) return Promise.resolve({});
    const now = this.options.clock.now();
    const meter = meterMachine(machine.resources, machine.createdAtMs, now, this.options.billing);
    this.#periodMeter = addMeters(this.#periodMeter, meter);
    const report = {
      machineId: machine.id,
      from: isoOf(machine.createdAtMs),
      to: isoOf(now),
      usage: { totalUptimeSeconds: meter.totalUptimeSeconds, cpuHours: meter.cpuHours, memoryGbHours: meter.memoryGbHours, diskGbHours: 0, egressGb: 0, execCount: machine.execCount },
      cost: { cpuMicros: meter.cpuMicros, memoryMicros: meter.memoryMicros, execMicros: 0, diskMicros: 0, egressMicros: 0, baseMicros: 0, totalMicros: meter.totalMicros, amountDueMicros: meter.totalMicros },
    };
    const cleanup = this.#serialize(machine, async () => {
      await this.#killProcesses(machine, reason === "shutdown" ? "shutdown" : "deleted");
      await this.#closeRelay(machine);
      await machine.cgroup?.remove();
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

  /** Deletes every machine past its TTL; returns their ids. */
  async sweep(): Promise<string[]> {
    const now = this.options.clock.now();
    const expired = [...this.#machines.values()].filter((m) => this.#isExpired(m, now));
    await Promise.all(expired.map((m) => this.#delete(m, "ttl")));
    return expired.map((m) => m.id);
  }

  // ---------------------------------------------------------------- exec

  async exec(id: string, body: unknown, outputMode: TExecOutputMode): Promise<TExecResponse> {
    const machine = this.#getLive(id);
    const parsed = ZExecRequestSchema.safeParse(body);
    if (!parsed.success) throw new WireError("BAD_REQUEST", describeZodError(parsed.error));
    const request = parsed.data;
    if (request.stream) throw new WireError("BAD_REQUEST", "streaming exec is not supported by the local substrate");
    if (machine.state !== "started" || !machine.image) throw new WireError("CONFLICT", `machine ${machine.id} is not started (state: ${machine.state})`);
    if (machine.processes.size >= this.options.limits.maxConcurrentExecsPerMachine) throw new WireError("UNAVAILABLE", "too many commands are running on this machine");
    const { limits } = this.options;
    const timeoutSeconds = Math.min(limits.maxExecTimeoutSeconds, request.timeoutSeconds || limits.defaultExecTimeoutSeconds);
    const bwrapArgs = buildBwrapArgs({
      imageRootDir: machine.image.rootDir,
      manifest: machine.image.manifest,
      tmpDir: guestRootDir(machine.dir, "tmp"),
      workspaceDir: guestRootDir(machine.dir, "workspace"),
      relayDir: machine.relay ? path.dirname(machine.relay.socketPath) : undefined,
      env: guestEnvironment(machine.env, request.env),
      cwd: request.cwd ?? machine.workdir ?? "/workspace",
      argv: guestArgv(request.command),
    });
    const memoryBytes = machine.resources.memoryMb * 1024 * 1024;
    const guest = spawnGuestProcess({
      bwrapPath: this.options.bwrapPath,
      bwrapArgs,
      hostUid: machine.hostUid,
      cgroupProcs: machine.cgroup?.procsFiles ?? { pids: undefined, memory: undefined },
      rlimits: {
        // With a pids cgroup the cgroup is the binding limit; RLIMIT_NPROC (per machine uid) is the
        // looser backstop, and the only one when no pids controller is writable.
        maxProcesses: this.options.cgroupRoot.pids ? limits.maxProcesses * 2 : limits.maxProcesses,
        openFiles: limits.openFiles,
        fileSizeBytes: Math.min(limits.fileSizeBytes, machine.resources.diskGb * 1024 ** 3),
        ...(this.options.cgroupRoot.memory ? {} : { dataBytes: memoryBytes }),
      },
      stdin: request.stdin ?? undefined,
      captureBytes: limits.execOutputBytes,
      timeoutMs: timeoutSeconds * 1000,
    });
    machine.processes.add(guest);
    machine.execCount += 1;
    machine.lastActivityAtMs = this.options.clock.now();
    void guest.done.then(() => machine.processes.delete(guest));

    if (request.background) {
      const pid = await guest.started;
      const early = await Promise.race([guest.done, new Promise<undefined>((r) => setTimeout(r, BACKGROUND_SETTLE_MS))]);
      if (early?.kind === "sandbox_failed" || pid === undefined) this.#throwForResult(machine, early ?? (await guest.done), timeoutSeconds);
      return { stdout: "", stderr: "", exitCode: 0, durationMs: 0, machineId: machine.id, stdoutTruncated: false, stderrTruncated: false, pid, background: true };
    }
    const result = await guest.done;
    if (result.kind !== "exited") this.#throwForResult(machine, result, timeoutSeconds);
    const response: TExecResponse = {
      stdout: outputMode === "b64" ? "" : result.stdout.bytes.toString("utf8"),
      stderr: outputMode === "b64" ? "" : result.stderr.bytes.toString("utf8"),
      exitCode: result.exitCode,
      durationMs: result.durationMs,
      machineId: machine.id,
      stdoutTruncated: result.stdout.isTruncated,
      stderrTruncated: result.stderr.isTruncated,
    };
    if (outputMode !== "text") {
      response.stdoutB64 = result.stdout.bytes.toString("base64");
      response.stderrB64 = result.stderr.bytes.toString("base64");
    }
    return response;
  }

  #throwForResult(machine: TMachine, result: TGuestProcessResult, timeoutSeconds: number): never {
    if (result.kind === "killed") {
      if (result.reason === "timeout") throw new WireError("TIMEOUT", `command timed out after ${timeoutSeconds}s; its whole process tree was killed`);
      if (result.reason === "shutdown") throw new WireError("UNAVAILABLE", "the local substrate is shutting down");
      throw new WireError("CONFLICT", `machine ${machine.id} was ${result.reason} while the command ran`);
    }
    if (result.kind === "sandbox_failed") {
      const message = sanitizeExcerpt(result.message, 1024);
      if (/^bwrap: Can't chdir/m.test(message)) throw new WireError("BAD_REQUEST", message.replace(/^bwrap: /, ""));
      logWarn("local substrate: sandbox failed to start", { machineId: machine.id, detail: message });
      throw new WireError("INTERNAL_ERROR", `sandbox failed to start: ${message}`);
    }
    throw new WireError("INTERNAL_ERROR", "unexpected command result");
  }

  // ---------------------------------------------------------------- files

  async upload(id: string, rawPath: string, isEncoded: boolean, body: Readable, declaredLength: number | undefined): Promise<{ path: string; size: number }> {
    const machine = this.#getLive(id);
    const file = parseGuestFilePath(rawPath, { isEncoded });
    if (declaredLength !== undefined && declaredLength > MAX_UPLOAD_BYTES) throw new WireError("PAYLOAD_TOO_LARGE", `upload exceeds ${MAX_UPLOAD_BYTES} bytes`);
    const { size } = await writeGuestFile({ rootDir: guestRootDir(machine.dir, file.root), file, body, maxBytes: MAX_UPLOAD_BYTES, uid: machine.hostUid });
    machine.lastActivityAtMs = this.options.clock.now();
    return { path: file.display, size };
  }

  async download(id: string, rawPath: string, isEncoded: boolean): Promise<{ stream: Readable; size: number }> {
    const machine = this.#getLive(id);
    const file = parseGuestFilePath(rawPath, { isEncoded });
    const opened = await openGuestFile({ rootDir: guestRootDir(machine.dir, file.root), file });
    machine.lastActivityAtMs = this.options.clock.now();
    return opened;
  }

  // ---------------------------------------------------------------- account

  #liveMeter(now = this.options.clock.now()): TMachineMeter {
    let meter = this.#periodMeter;
    for (const machine of this.#machines.values()) meter = addMeters(meter, meterMachine(machine.resources, machine.createdAtMs, now, this.options.billing));
    return meter;
  }

  #money(now = this.options.clock.now()) {
    const { billing } = this.options;
    return accountMoney({ initialCreditMicros: this.#initialCreditMicros, periodTotalMicros: this.#liveMeter(now).totalMicros, budgetPolicy: billing.budgetPolicy, monthlyBudgetMicros: billing.monthlyBudgetMicros });
  }

  account(): Record<string, unknown> {
    const now = this.options.clock.now();
    const { billing, limits } = this.options;
    const meter = this.#liveMeter(now);
    const money = this.#money(now);
    return {
      tenantId: this.options.tenantId,
      status: LOCAL_SUBSTRATE_ACCOUNT_STATUS,
      effectiveMaxCpus: limits.maxCpus * limits.maxMachines,
      effectiveMaxMemoryMb: limits.maxMemoryMb * limits.maxMachines,
      effectiveMaxMachines: limits.maxMachines,
      budgetRemainingMicros: money.budgetRemainingMicros,
      monthlyBudgetMicros: money.monthlyBudgetMicros,
      prepaidCreditMicros: money.prepaidCreditMicros,
      lowBalanceThresholdMicros: billing.lowBalanceThresholdMicros,
      periodCost: {
        cpuMicros: meter.cpuMicros,
        memoryMicros: meter.memoryMicros,
        execMicros: 0,
        diskMicros: 0,
        egressMicros: 0,
        baseMicros: 0,
        volumeDiscountMicros: 0,
        freeCreditMicros: billing.freeCreditMicros,
        creditAppliedMicros: Math.min(meter.totalMicros, this.#initialCreditMicros),
        totalMicros: meter.totalMicros,
        amountDueMicros: money.amountDueMicros,
      },
      periodUsage: {
        tenantId: this.options.tenantId,
        from: isoOf(this.#startedAtMs),
        to: isoOf(now),
        totalUptimeSeconds: meter.totalUptimeSeconds,
        cpuHours: meter.cpuHours,
        memoryGbHours: meter.memoryGbHours,
        diskGbHours: 0,
        egressGb: 0,
        machineCount: this.#machinesCreated,
      },
      plan: {
        id: "local-substrate",
        name: "Local substrate (bubblewrap, not a VM)",
        isDefault: true,
        createdAt: isoOf(this.#startedAtMs),
        maxGroups: 0,
        maxCpus: limits.maxCpus,
        maxMemoryMb: limits.maxMemoryMb,
        maxMachines: limits.maxMachines,
        maxConcurrentMachines: limits.maxMachines,
        rateCpuHourMicros: billing.rateCpuHourMicros,
        rateMemoryGbHourMicros: billing.rateMemoryGbHourMicros,
        rateExecMicros: 0,
        rateBaseHourMicros: 0,
        rateDiskGbHourMicros: 0,
        rateEgressGbMicros: 0,
        freeCreditMicros: billing.freeCreditMicros,
        budgetPolicy: billing.budgetPolicy,
        monthlyBudgetMicros: money.monthlyBudgetMicros,
      },
    };
  }

  /** Admin: sets the remaining prepaid credit and/or the budget policy, for spend-ceiling tests. */
  updateAccount(update: { prepaidCreditMicros?: number | undefined; budgetPolicy?: TBudgetPolicy | undefined; monthlyBudgetMicros?: number | null | undefined; lowBalanceThresholdMicros?: number | undefined }): void {
    if (update.prepaidCreditMicros !== undefined) this.#initialCreditMicros = update.prepaidCreditMicros + this.#liveMeter().totalMicros;
    if (update.budgetPolicy !== undefined) this.options.billing.budgetPolicy = update.budgetPolicy;
    if (update.monthlyBudgetMicros !== undefined) this.options.billing.monthlyBudgetMicros = update.monthlyBudgetMicros;
    if (update.lowBalanceThresholdMicros !== undefined) this.options.billing.lowBalanceThresholdMicros = update.lowBalanceThresholdMicros;
  }

  // ---------------------------------------------------------------- admin / lifecycle

  async snapshot(): Promise<Record<string, unknown>> {
    const now = this.options.clock.now();
    const machines = await Promise.all(
      [...this.#machines.values()].map(async (m) => ({
        id: m.id,
        name: m.name,
        state: m.state,
        createdAt: isoOf(m.createdAtMs),
        expiresAt: m.ttlSeconds === null ? null : isoOf(m.createdAtMs + m.ttlSeconds * 1000),
        isExpired: this.#isExpired(m, now),
        hostUid: m.hostUid,
        runningCommands: m.processes.size,
        cgroupProcesses: (await m.cgroup?.processCount()) ?? null,
        pidsPeak: (await m.cgroup?.pidsPeak()) ?? null,
        pidsMaxEvents: (await m.cgroup?.pidsMaxEvents()) ?? null,
        oomKills: (await m.cgroup?.oomKills()) ?? null,
        relayConnections: m.relay?.connectionCount() ?? null,
        hasRoot: await fs.stat(m.dir).then(() => true, () => false),
      })),
    );
    const leftoverRoots = (await fs.readdir(this.options.dirs.machines).catch(() => [] as string[])).filter((name) => !this.#machines.has(name));
    return {
      machineCount: machines.length,
      runningCommandCount: machines.reduce((sum, m) => sum + m.runningCommands, 0),
      pendingCleanups: this.#cleanups.size,
      leftoverRoots,
      cleanupFailures: [...this.#cleanupFailures],
      limitsMode: this.limitsMode,
      machines,
    };
  }

  async shutdown(): Promise<void> {
    this.#isShuttingDown = true;
    await Promise.all([...this.#machines.values()].map((m) => this.#delete(m, "shutdown")));
    await Promise.all([...this.#cleanups]);
  }
}
