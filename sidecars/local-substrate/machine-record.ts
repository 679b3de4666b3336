/**
 * One machine as the local substrate holds it in memory, and the limits every machine is held to.
 * The record is the single source of every view (machine-views.ts, account-ledger.ts) and of every
 * operation on it (machine-registry.ts, machine-exec.ts, machine-files.ts).
 */
import type { MachineCgroup } from "./cgroups";
import type { TGuestProcess } from "./guest-process";
import type { TResolvedImage } from "./image-manifest";
import type { TRelayForwarder } from "./relay-forwarder";
import type { TMachineNetwork } from "./wire-schemas";

export const MACHINE_ID_PATTERN = /^mach-[0-9a-f]{32}$/;

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

export type TMachineState = "stopped" | "started" | "error";

export type TMachine = {
  id: string;
  name: string | null;
  source: { type: "image" | "smolmachine"; reference: string; arch: string | null };
  resources: { cpus: number; memoryMb: number; diskGb: number; maxProcesses: number };
  network: TMachineNetwork;
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
  /** The machine's root on the host (machine-roots.ts); never visible to the guest as such. */
  dir: string;
  image: TResolvedImage | undefined;
  relay: TRelayForwarder | undefined;
  cgroup: MachineCgroup | undefined;
  processes: Set<TGuestProcess>;
  execCount: number;
  /** Serializes start/stop/delete of one machine. */
  chain: Promise<unknown>;
};

export function isMachineExpired(machine: TMachine, now: number): boolean {
  return machine.ttlSeconds !== null && now >= machine.createdAtMs + machine.ttlSeconds * 1000;
}

/** Runs `body` after every earlier start/stop/delete of this machine has settled. */
export function runSerialized<T>(machine: TMachine, body: () => Promise<T>): Promise<T> {
  const next = machine.chain.then(body, body);
  machine.chain = next.catch(() => undefined);
  return next;
}
