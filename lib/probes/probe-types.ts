/**
 * What a probe gets and returns. A probe observes behaviour in real guests of the configured
 * substrate through the same Substrate adapter the lifecycle uses; it never trusts what the
 * provider says about itself. It returns passed/failed with bounded detail; a provider error is a
 * failure carrying the provider's own (sanitized) text (seed 001 finding B); anything else thrown
 * is `error` (the probe could not run).
 */
import type { Db } from "../db/client";
import type { TProbeTarget } from "./probe-tasks";
import type { TEnv } from "../env";
import type { TRelayTransport } from "../relay/transports/transport";
import type { TSubstrateConfig } from "../contract/dispatch-setting";
import type { Substrate } from "../substrate/substrate";
import type { TProbeId } from "./probe-registry";

export type TProbeTaskOptions = { relayTransport?: TRelayTransport };

export type TProbeDeps = {
  db: Db;
  env: TEnv;
  substrate: Substrate;
  /** Drives a probe-owned task through the lifecycle steps (composition root: lib/jobs). */
  runProbeTask(taskId: string, options?: TProbeTaskOptions): Promise<void>;
  readyTimeoutMs?: number;
  /** Extra P2 targets on loopback that a test set up itself (never any other address). */
  extraEgressTargets?: { label: string; host: string; port: number; protocol: "tcp" | "udp" }[];
  /** Spawns made by an in-process local substrate (tests only) are the provider's, not the host control plane's. */
  isProviderSpawn?(info: { file: string; stack: string }): boolean;
  /** Test seam: adds to the evidence document before P7 scans it. */
  tamperEvidence?(doc: Record<string, unknown>): void;
  /** Test seam: rewrites a guest program (by file name) before it is uploaded into a probe guest (a weakened model endpoint). */
  tamperGuestProgram?(name: string, source: string): string;
  onProgress?(probe: TProbeId, status: string): void;
};

export type TProbeRunContext = {
  runId: string;
  /** The substrate kind the run is on ("local" is not a VM). */
  substrate: string;
  /** The run's selected probes, in run order (P7 builds and scans the document of all of them). */
  probes: readonly TProbeSummary[];
  configDigest: string;
  config: TSubstrateConfig;
  startedAt: Date;
  /** Values that must never appear in evidence (canaries, tokens, the session secret): P7 scans for them. */
  secrets: Set<string>;
  /**
   * What operator code wrote inside the probe guests — the model endpoint's log and its responses,
   * raw and never stored — for P7 to scan for the secrets (P2 adds the handles it gave the guests
   * to `secrets`).
   */
  guestWrites: { where: string; text: string }[];
  /** The finished probes' results so far, for the evidence document. */
  results: Map<TProbeId, TProbeResult & { durationMs: number }>;
  /**
   * The run's disposable target repository (P1, P2, P4, P5 run tasks on it): written and mirrored
   * when a probe first asks, then shared, since the run's probes run side by side.
   */
  probeTarget(): Promise<TProbeTarget>;
};

export type TProbeOutcome = { status: "passed" | "failed"; detail: Record<string, unknown>; providerError?: string };
export type TProbeResult = {
  status: "passed" | "failed" | "error";
  detail: Record<string, unknown>;
  providerError?: string;
};

export type TProbe = (deps: TProbeDeps, run: TProbeRunContext) => Promise<TProbeOutcome>;

/** What a run, its evidence and the probes page know of a probe besides its code. */
export type TProbeSummary = { readonly id: TProbeId; readonly title: string };

/**
 * One qualification probe, defined once in its own module `pN-….ts` and listed once in
 * `probe-registry.ts` (`PROBES`, whose order is the run order): its id, its title, its
 * wall-clock cap (a probe that outlives it is `error`, and the run goes on) and its code.
 */
export type TProbeDefinition<Id extends string = string> = {
  readonly id: Id;
  readonly title: string;
  readonly timeCapMs: number;
  readonly run: TProbe;
  /**
   * It reads what the other probes of the run left (P7 scans the whole run's evidence), so it
   * starts once they have all finished. The others run side by side from the start: each owns its
   * tasks, guests, listeners and canaries, and a watch that one of them keeps (P4's host processes)
   * then also sees what the others make the control plane do.
   */
  readonly isAfterTheOthers?: boolean;
};

const DEFINED = new WeakSet<object>();

/** Defines a probe; `id` keeps its literal type, so the registry's list derives `TProbeId`. */
export function defineProbe<const Id extends string>(definition: TProbeDefinition<Id>): TProbeDefinition<Id> {
  const defined = Object.freeze({ ...definition });
  DEFINED.add(defined);
  return defined;
}

/** Whether a value is a probe made by `defineProbe` (the registry's test finds the definitions of every module with it). */
export function isProbeDefinition(value: unknown): value is TProbeDefinition {
  return typeof value === "object" && value !== null && DEFINED.has(value);
}

export function outcome(isPass: boolean, detail: Record<string, unknown>, providerError?: string): TProbeOutcome {
  return { status: isPass ? "passed" : "failed", detail, ...(providerError ? { providerError } : {}) };
}
