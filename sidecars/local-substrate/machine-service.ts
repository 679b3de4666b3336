/**
 * The provider behind the wire, as the HTTP layer (public-api.ts, admin-api.ts) sees it: one
 * object composing the machine registry (machine-registry.ts), exec (machine-exec.ts), files
 * (machine-files.ts) and the account (account-ledger.ts). Nothing here knows about HTTP beyond
 * throwing WireError with the vendor's codes and returning the vendor-shaped views of
 * wire-responses.ts. State lives in memory (plus each machine's roots on disk); `shutdown()` kills
 * every live machine and removes its root.
 */
import type { Readable } from "node:stream";
import { AccountLedger, type TAccountUpdate, type TBillingSettings } from "./account-ledger";
import type { TCgroupRoot } from "./cgroups";
import type { OffsetClock } from "./clock";
import { execOnMachine } from "./machine-exec";
import { downloadMachineFile, uploadMachineFile } from "./machine-files";
import type { TSubstrateLimits } from "./machine-record";
import { MachineRegistry, type TMachinesSnapshot } from "./machine-registry";
import type { TSubstrateDirs } from "./substrate-dirs";
import type {
  TLocalAccount,
  TLocalExecResponse,
  TLocalMachineInfo,
  TLocalUploadResponse,
  TLocalUsageReport,
} from "./wire-responses";
import type { WeakeningBook } from "./weakening";
import type { TExecOutputMode } from "./wire-schemas";
import type { TExecHardening } from "./machine-exec";
import type { TDiskMode } from "./machine-disk";
import { MAX_CONCURRENT_WAITS, waitOnMachine, type TWaitResponse } from "./machine-wait";
import { WireError } from "./wire-error";
import type { TLocalLimitsMode } from "../../lib/contract/smolcloud-wire";

export type TMachineServiceOptions = {
  dirs: TSubstrateDirs;
  dataDir: string;
  clock: OffsetClock;
  limits: TSubstrateLimits;
  billing: TBillingSettings;
  readinessDelayMs: number;
  cgroupRoot: TCgroupRoot;
  bwrapPath: string;
  /** Kernel-surface hardening of every guest command (issue 12, item 8). */
  hardening: TExecHardening;
  /** How a machine's total disk is bounded on this host (machine-disk.ts). */
  diskMode: TDiskMode;
  tenantId: string;
  /** Ports of our own servers, which a relay target may never point at. */
  ownPorts: () => number[];
  isQuiet: boolean;
  /** Test-only weakenings (weakening.ts); present only when started with allowWeakening. */
  weakening?: WeakeningBook;
};

/** Which mechanism enforces the process and memory limits on this host (the wire contract's shape). */
export type TLimitsMode = TLocalLimitsMode;

export class MachineService {
  readonly #ledger: AccountLedger;
  readonly #registry: MachineRegistry;
  #waiting = 0;

  constructor(private readonly options: TMachineServiceOptions) {
    this.#ledger = new AccountLedger({
      billing: options.billing,
      limits: options.limits,
      tenantId: options.tenantId,
      startedAtMs: options.clock.now(),
    });
    this.#registry = new MachineRegistry({
      dirs: options.dirs,
      dataDir: options.dataDir,
      clock: options.clock,
      limits: options.limits,
      readinessDelayMs: options.readinessDelayMs,
      cgroupRoot: options.cgroupRoot,
      ownPorts: options.ownPorts,
      ledger: this.#ledger,
      isQuiet: options.isQuiet,
      isTtlIgnored: () => options.weakening?.current.ttlIgnored ?? false,
    });
  }

  get limitsMode(): TLimitsMode {
    return {
      pids: this.options.cgroupRoot.pids ? "cgroup" : "rlimit",
      memory: this.options.cgroupRoot.memory ? "cgroup" : "rlimit-data",
      cpu: this.options.cgroupRoot.cpu ? "cgroup" : "none",
      disk: this.options.diskMode,
      seccomp: true,
      disableUserns: this.options.hardening.disableUserns,
    };
  }

  // ---------------------------------------------------------------- machines

  create(body: unknown): Promise<TLocalMachineInfo> {
    return this.#registry.create(body);
  }

  list(): TLocalMachineInfo[] {
    return this.#registry.list();
  }

  get(id: string): TLocalMachineInfo {
    return this.#registry.get(id);
  }

  start(id: string): Promise<TLocalMachineInfo> {
    return this.#registry.start(id);
  }

  stop(id: string): Promise<TLocalMachineInfo> {
    return this.#registry.stop(id);
  }

  delete(
    id: string,
    options: { includeUsage: boolean },
  ): Promise<TLocalUsageReport | Record<string, never> | undefined> {
    return this.#registry.delete(id, options);
  }

  /** Deletes every machine past its TTL; returns their ids. */
  sweep(): Promise<string[]> {
    return this.#registry.sweep();
  }

  // ---------------------------------------------------------------- exec and files

  async exec(id: string, body: unknown, outputMode: TExecOutputMode): Promise<TLocalExecResponse> {
    const machine = this.#registry.getLive(id);
    const { limits, bwrapPath, cgroupRoot, clock } = this.options;
    return execOnMachine(
      {
        limits,
        bwrapPath,
        cgroupRoot,
        clock,
        hardening: this.options.hardening,
        weakening: this.options.weakening?.current,
      },
      machine,
      body,
      outputMode,
    );
  }

  async upload(
    id: string,
    rawPath: string,
    isEncoded: boolean,
    body: Readable,
    declaredLength: number | undefined,
  ): Promise<TLocalUploadResponse> {
    return uploadMachineFile(this.options.clock, this.#registry.getLive(id), {
      rawPath,
      isEncoded,
      body,
      declaredLength,
    });
  }

  async download(
    id: string,
    rawPath: string,
    isEncoded: boolean,
  ): Promise<{ stream: Readable; size: number; isLengthDeclared: boolean }> {
    const isCapOff = this.options.weakening?.current.exportCapOff ?? false;
    const file = await downloadMachineFile(this.options.clock, this.#registry.getLive(id), {
      rawPath,
      isEncoded,
      isCapOff,
    });
    if (isCapOff) this.options.weakening?.noteUncappedDownload(file.size);
    return file;
  }

  /** The long poll of machine-wait.ts, bounded by MAX_CONCURRENT_WAITS across the substrate. */
  async wait(id: string, body: unknown, signal: AbortSignal): Promise<TWaitResponse> {
    this.#registry.getLive(id);
    if (this.#waiting >= MAX_CONCURRENT_WAITS)
      throw new WireError("UNAVAILABLE", "too many waits are open on this substrate");
    this.#waiting++;
    try {
      return await waitOnMachine(
        {
          clock: this.options.clock,
          readinessDelayMs: this.options.readinessDelayMs,
          getLive: () => this.#registry.getLive(id),
          signal,
        },
        body,
      );
    } finally {
      this.#waiting--;
    }
  }

  // ---------------------------------------------------------------- account

  /** The vendor's account view plus `limitsMode`, which the dispatch digest binds (issue 27). */
  account(): TLocalAccount & { limitsMode: TLimitsMode } {
    return { ...this.#ledger.view(this.#registry.machines(), this.options.clock.now()), limitsMode: this.limitsMode };
  }

  /** Admin: sets the remaining prepaid credit and/or the budget policy, for spend-ceiling tests. */
  updateAccount(update: TAccountUpdate): void {
    this.#ledger.update(update, this.#registry.machines(), this.options.clock.now());
  }

  // ---------------------------------------------------------------- admin / lifecycle

  async snapshot(): Promise<TMachinesSnapshot & { limitsMode: TLimitsMode }> {
    return { ...(await this.#registry.snapshot()), limitsMode: this.limitsMode };
  }

  shutdown(): Promise<void> {
    return this.#registry.shutdown();
  }
}
