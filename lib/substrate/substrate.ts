/**
 * The only way the control plane runs anything: a substrate of disposable guest machines.
 * There is no host executor in this code base — no code path runs a student command, a guest
 * script or a trusted check on the host (seed 000 "no host fallback").
 */
import type { TAccount, TExecResponse, TMachineInfo, TUsageReport } from "../contract/smolcloud-wire";

export type TNetworkPolicy = { mode: "blocked" } | { mode: "allowCidrs"; cidrs?: string[]; hosts?: string[] };

export type TMachineSpec = {
  /** deterministic from our machine row, so a restarted worker can find a machine whose create answer it lost */
  name: string;
  source: { type: "smolmachine" | "image"; reference: string };
  /**
   * `maxProcesses` (optional): the task's process ceiling. Sent only to the local substrate (its
   * pids.max); the hosted API has no such field, and there the guest runner's RLIMIT_NPROC holds it.
   */
  resources: { cpus: number; memoryMb: number; diskGb: number; maxProcesses?: number };
  network: TNetworkPolicy;
  env?: Record<string, string>;
  ttlSeconds: number;
  /** only qualification probe P6 (the provider's TTL sweep, observed): allows a TTL down to 3 s */
  isTtlProbe?: boolean;
};

export type TExecRequest = {
  command: string[];
  cwd?: string;
  env?: Record<string, string>;
  timeoutSeconds: number;
  background?: boolean;
};

export type TExecResult = TExecResponse & { stdoutBytes: number; stderrBytes: number };

export type TAccountPreflight = {
  headroomMicros: number;
  source: "budgetRemainingMicros" | "prepaidCreditMicros";
  isLowBalance: boolean;
  account: TAccount;
};

export interface Substrate {
  /** "smolcloud" for the hosted provider, "local" for the local substrate (not a VM) */
  readonly label: string;
  /** refuses, before any request, a spec this substrate can never create (seed 001 finding A) */
  assertCreatable(spec: TMachineSpec): void;
  create(spec: TMachineSpec): Promise<TMachineInfo>;
  start(machineId: string): Promise<TMachineInfo>;
  waitReady(machineId: string, options: { timeoutMs: number; pollMs?: number }): Promise<TMachineInfo>;
  /**
   * Resolves when one of the guest files may exist, or after `timeoutMs`: a wake-up, never a
   * verdict — the caller reads the files itself. Where the substrate can say so (the local
   * substrate's long poll) it resolves the moment one appears; elsewhere (the hosted API) it is a
   * sleep of `pollMs`, the caller's fixed-interval polling as before.
   */
  waitForFiles(machineId: string, guestPaths: string[], options: { timeoutMs: number; pollMs: number }): Promise<void>;
  get(machineId: string): Promise<TMachineInfo | undefined>;
  findByName(name: string): Promise<TMachineInfo | undefined>;
  listMachines(): Promise<TMachineInfo[]>;
  upload(machineId: string, guestPath: string, bytes: Buffer): Promise<void>;
  exec(machineId: string, request: TExecRequest, options: { maxOutputBytes: number }): Promise<TExecResult>;
  /** streams to a file, refusing (and deleting the partial file) once maxBytes would be exceeded */
  downloadToFile(
    machineId: string,
    guestPath: string,
    hostPath: string,
    options: { maxBytes: number },
  ): Promise<{ bytes: number; sha256: string }>;
  /** small files (results, mailbox); undefined when the file does not exist */
  downloadSmall(machineId: string, guestPath: string, options: { maxBytes: number }): Promise<Buffer | undefined>;
  /** 'deleted' with a usage report, or 'absent' when the provider no longer knows the machine */
  destroy(machineId: string): Promise<{ kind: "deleted"; usage: TUsageReport | undefined } | { kind: "absent" }>;
  account(): Promise<TAccount>;
}
