/**
 * `startLocalSubstrate(options)`: a SmolCloud-compatible server on loopback (see
 * SMOLCLOUD_API.md) whose guests are bubblewrap sandboxes on this host — NOT VMs, and labelled so
 * in `/v1/account` `status` and in every machine's `source`. Used by `npm start` for development
 * and, over real HTTP, by every test of the SmolCloud adapter.
 *
 * State is in memory plus the machines' roots under `<dataDir>/substrate/machines/`; `stop()`
 * kills every live machine, removes its root and its cgroups, and closes both servers. A
 * substrate killed before `stop()` leaves roots and empty cgroups behind; the next start removes
 * those whose owning process is gone (its guests died with it: the sandbox chain has
 * `--pdeathsig`/`--die-with-parent`). Images
 * persist under `<dataDir>/substrate/images/`. A second, separate loopback server is the admin API
 * (admin-api.ts) for fault injection, clock fast-forward and orphan checks.
 */
import fs from "node:fs/promises";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { z } from "zod";
import { AppError } from "../../lib/errors";
import { parseOrThrow } from "../../lib/parse-or-throw";
import { logInfo } from "../../lib/log";
import type { TBillingSettings } from "./account-ledger";
import { createAdminHandler } from "./admin-api";
import { createCgroupRoot, removeCgroupRoot } from "./cgroups";
import { OffsetClock, SYSTEM_CLOCK, type TClock } from "./clock";
import { FaultBook } from "./faults";
import { createHangRegistry } from "./http-wire";
import type { TSubstrateLimits } from "./machine-record";
import { removeOrphanedMachineRoots } from "./machine-roots";
import { MachineService } from "./machine-service";
import { createPublicHandler } from "./public-api";
import { WeakeningBook } from "./weakening";
import { probeBwrapFeatures } from "./bwrap-features";
import { writeSeccompFilterFile } from "./seccomp-filter";
import { probeDiskMode } from "./machine-disk";
import { assertTraversableByOthers, ensureSubstrateDirs } from "./substrate-dirs";

export const DEFAULT_LIMITS: TSubstrateLimits = {
  maxMachines: 16,
  maxCpus: 4,
  maxMemoryMb: 4096,
  maxDiskGb: 20,
  maxProcesses: 256,
  openFiles: 1024,
  fileSizeBytes: 1024 ** 3,
  defaultExecTimeoutSeconds: 600,
  maxExecTimeoutSeconds: 3600,
  maxConcurrentExecsPerMachine: 16,
  execOutputBytes: 1024 * 1024,
  relayMaxConnections: 32,
};

export const DEFAULT_BILLING: TBillingSettings = {
  rateCpuHourMicros: 50_000,
  rateMemoryGbHourMicros: 10_000,
  prepaidCreditMicros: 100_000_000,
  lowBalanceThresholdMicros: 5_000_000,
  budgetPolicy: "soft",
  monthlyBudgetMicros: null,
  freeCreditMicros: 0,
};

const ZPositiveInt = z.number().int().min(1);
const ZOptionsSchema = z.object({
  dataDir: z.string().min(1),
  port: z.number().int().min(0).max(65535).default(0),
  adminPort: z.number().int().min(0).max(65535).default(0),
  token: z.string().min(16, "token must be at least 16 characters"),
  adminToken: z.string().min(16, "adminToken must be at least 16 characters"),
  tenantId: z.string().min(1).max(100).default("tenant-local"),
  /**
   * How long a started machine reads `ready: false`, as the vendor's booting VM does. A bubblewrap
   * guest has nothing to boot — its root, cgroup and image are in place when start answers — so
   * the default is none (issue 29: no fixed wait on the critical path); tests that exercise the
   * adapter's wait for readiness set one.
   */
  readinessDelayMs: z.number().int().min(0).max(60_000).default(0),
  sweepIntervalMs: z.number().int().min(10).max(60_000).default(500),
  hangCapMs: z.number().int().min(1).max(600_000).default(30_000),
  bwrapPath: z.string().default("/usr/bin/bwrap"),
  isQuiet: z.boolean().default(false),
  /**
   * Serve the local extensions of the API (GET /v1/extensions, POST /v1/machines/{id}/wait: a long
   * poll instead of fixed-interval polling). Off = exactly the vendor's routes, as the hosted API —
   * what the adapter's fallback tests run against.
   */
  hasExtensions: z.boolean().default(true),
  /** Test-only: enables PUT /admin/weakening (weakening.ts). Never set by `npm start`. */
  allowWeakening: z.boolean().default(false),
  billing: z
    .object({
      rateCpuHourMicros: z.number().int().min(0),
      rateMemoryGbHourMicros: z.number().int().min(0),
      prepaidCreditMicros: z.number().int().min(0),
      lowBalanceThresholdMicros: z.number().int().min(0),
      budgetPolicy: z.enum(["hard", "soft"]),
      monthlyBudgetMicros: z.number().int().min(0).nullable(),
      freeCreditMicros: z.number().int().min(0),
    })
    .partial()
    .default({}),
  limits: z
    .object({
      maxMachines: ZPositiveInt,
      maxCpus: ZPositiveInt,
      maxMemoryMb: z.number().int().min(64),
      maxDiskGb: ZPositiveInt,
      maxProcesses: z.number().int().min(8),
      openFiles: z.number().int().min(16),
      fileSizeBytes: ZPositiveInt,
      defaultExecTimeoutSeconds: ZPositiveInt,
      maxExecTimeoutSeconds: ZPositiveInt,
      maxConcurrentExecsPerMachine: ZPositiveInt,
      execOutputBytes: ZPositiveInt,
      relayMaxConnections: ZPositiveInt,
    })
    .partial()
    .default({}),
});

export type TLocalSubstrateOptions = z.input<typeof ZOptionsSchema> & {
  /** Epoch-ms clock; the admin API's fast-forward adds an offset on top of it. */
  clock?: TClock;
};

export type TLocalSubstrate = {
  /** Base URL of the SmolCloud-compatible API, e.g. http://127.0.0.1:7480 */
  url: string;
  /** Base URL of the admin API (separate port, separate token). */
  adminUrl: string;
  stop(): Promise<void>;
};

function listen(server: http.Server, port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    // Loopback only, always: this API runs commands on the host's sandbox and must not be exposed.
    server.listen(port, "127.0.0.1", () => resolve((server.address() as AddressInfo).port));
  });
}

export async function startLocalSubstrate(input: TLocalSubstrateOptions): Promise<TLocalSubstrate> {
  const options = parseOrThrow(ZOptionsSchema, input, { code: "CONFIG_INVALID", label: "local substrate options" });
  if (options.token === options.adminToken)
    throw new AppError("CONFIG_INVALID", "the admin token must differ from the API token");
  if (process.getuid?.() !== 0)
    throw new AppError(
      "CONFIG_INVALID",
      "the local substrate must run as root: it gives every machine its own unprivileged uid and cgroups",
    );
  await fs.access(options.bwrapPath, fs.constants.X_OK).catch(() => {
    throw new AppError(
      "CONFIG_INVALID",
      `bubblewrap was not found at ${options.bwrapPath} (Debian package "bubblewrap")`,
    );
  });
  const dirs = await ensureSubstrateDirs(options.dataDir);
  await assertTraversableByOthers(dirs.root);
  const orphaned = await removeOrphanedMachineRoots(dirs.machines);
  if (orphaned.length > 0 && !options.isQuiet)
    logInfo("local substrate: removed machine roots left by a substrate that died", { count: orphaned.length });

  const clock = new OffsetClock(input.clock ?? SYSTEM_CLOCK);
  const hardening = {
    disableUserns: (await probeBwrapFeatures(options.bwrapPath)).hasDisableUserns,
    seccompFile: await writeSeccompFilterFile(dirs.root),
  };
  const cgroupRoot = await createCgroupRoot();
  const ports: number[] = [];
  const weakening = options.allowWeakening ? new WeakeningBook() : undefined;
  const service = new MachineService({
    weakening,
    dirs,
    dataDir: options.dataDir,
    clock,
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    billing: { ...DEFAULT_BILLING, ...options.billing },
    readinessDelayMs: options.readinessDelayMs,
    cgroupRoot,
    bwrapPath: options.bwrapPath,
    hardening,
    diskMode: await probeDiskMode(),
    tenantId: options.tenantId,
    ownPorts: () => ports,
    isQuiet: options.isQuiet,
  });
  const faults = new FaultBook();
  const hangs = createHangRegistry();
  const publicServer = http.createServer(
    createPublicHandler({
      service,
      token: options.token,
      faults,
      hangs,
      hangCapMs: options.hangCapMs,
      hasExtensions: options.hasExtensions,
    }),
  );
  let url = "";
  const adminServer = http.createServer(
    createAdminHandler({ service, token: options.adminToken, faults, clock, publicUrl: () => url, weakening }),
  );
  try {
    ports.push(await listen(publicServer, options.port));
    ports.push(await listen(adminServer, options.adminPort));
  } catch (error) {
    publicServer.close();
    adminServer.close();
    await removeCgroupRoot(cgroupRoot);
    throw new AppError("CONFIG_INVALID", `the local substrate could not listen: ${(error as Error).message}`);
  }
  url = `http://127.0.0.1:${ports[0]}`;
  const adminUrl = `http://127.0.0.1:${ports[1]}`;
  const sweeper = setInterval(() => void service.sweep(), options.sweepIntervalMs);
  sweeper.unref();
  if (!options.isQuiet)
    logInfo("local substrate listening (bubblewrap sandboxes, NOT VMs)", { url, adminUrl, limits: service.limitsMode });

  let stopping: Promise<void> | undefined;
  return {
    url,
    adminUrl,
    stop() {
      stopping ??= (async () => {
        clearInterval(sweeper);
        const closed = Promise.all(
          [publicServer, adminServer].map((server) => new Promise<void>((resolve) => server.close(() => resolve()))),
        );
        hangs.releaseAll();
        await service.shutdown();
        publicServer.closeAllConnections();
        adminServer.closeAllConnections();
        await closed;
        await removeCgroupRoot(cgroupRoot);
      })();
      return stopping;
    },
  };
}
