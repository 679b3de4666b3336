/**
 * What the local substrate shows of a machine: the vendor's MachineInfo and deletion usage report
 * (typed by the shared wire contract, wire-responses.ts), and the admin API's per-machine counts
 * that "no orphan" assertions read. Pure but for the admin view's cgroup and root probes.
 */
import fs from "node:fs/promises";
import type { TMachineMeter } from "./billing";
import { isoOf } from "./clock";
import { isMachineExpired, type TMachine, type TMachineState } from "./machine-record";
import type { TLocalMachineInfo, TLocalUsageReport } from "./wire-responses";

/** Stamped into every machine's `source`. */
export const LOCAL_SUBSTRATE_SOURCE_KIND = "local-bubblewrap-sandbox-not-a-vm";

function hostArch(): string {
  return process.arch === "x64" ? "amd64" : process.arch;
}

/** A started machine becomes ready `readinessDelayMs` after its start (the vendor's boot; none by default here). */
export function machineInfoView(
  machine: TMachine,
  options: { now: number; readinessDelayMs: number },
): TLocalMachineInfo {
  const readyAtMs =
    machine.state === "started" && machine.startedAtMs !== null ? machine.startedAtMs + options.readinessDelayMs : null;
  const isReady = readyAtMs !== null && options.now >= readyAtMs;
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
    readyAt: isReady ? isoOf(readyAtMs) : null,
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

/** `DELETE …?includeUsage=true`: the machine's whole life, metered up to `now`. */
export function usageReportView(machine: TMachine, meter: TMachineMeter, now: number): TLocalUsageReport {
  return {
    machineId: machine.id,
    from: isoOf(machine.createdAtMs),
    to: isoOf(now),
    usage: {
      totalUptimeSeconds: meter.totalUptimeSeconds,
      cpuHours: meter.cpuHours,
      memoryGbHours: meter.memoryGbHours,
      diskGbHours: 0,
      egressGb: 0,
      execCount: machine.execCount,
    },
    cost: {
      cpuMicros: meter.cpuMicros,
      memoryMicros: meter.memoryMicros,
      execMicros: 0,
      diskMicros: 0,
      egressMicros: 0,
      baseMicros: 0,
      totalMicros: meter.totalMicros,
      amountDueMicros: meter.totalMicros,
    },
  };
}

export type TMachineAdminView = {
  id: string;
  name: string | null;
  state: TMachineState;
  createdAt: string;
  expiresAt: string | null;
  isExpired: boolean;
  hostUid: number;
  runningCommands: number;
  /** null when the machine has no cgroup (no writable controller). */
  cgroupProcesses: number | null;
  pidsPeak: number | null;
  pidsMaxEvents: number | null;
  oomKills: number | null;
  /** The CFS quota (µs per 100 ms period) that bounds the machine at its cpus, and how often it bit. */
  cpuQuotaMicros: number | null;
  cpuThrottledPeriods: number | null;
  relayConnections: number | null;
  hasRoot: boolean;
};

export async function machineAdminView(machine: TMachine, now: number): Promise<TMachineAdminView> {
  return {
    id: machine.id,
    name: machine.name,
    state: machine.state,
    createdAt: isoOf(machine.createdAtMs),
    expiresAt: machine.ttlSeconds === null ? null : isoOf(machine.createdAtMs + machine.ttlSeconds * 1000),
    isExpired: isMachineExpired(machine, now),
    hostUid: machine.hostUid,
    runningCommands: machine.processes.size,
    cgroupProcesses: (await machine.cgroup?.processCount()) ?? null,
    pidsPeak: (await machine.cgroup?.pidsPeak()) ?? null,
    pidsMaxEvents: (await machine.cgroup?.pidsMaxEvents()) ?? null,
    oomKills: (await machine.cgroup?.oomKills()) ?? null,
    cpuQuotaMicros: (await machine.cgroup?.cpuQuotaMicros()) ?? null,
    cpuThrottledPeriods: (await machine.cgroup?.cpuThrottledPeriods()) ?? null,
    relayConnections: machine.relay?.connectionCount() ?? null,
    hasRoot: await fs.stat(machine.dir).then(
      () => true,
      () => false,
    ),
  };
}
