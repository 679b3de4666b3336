/**
 * The kinds of background run and their state machines, in one place (issue 28, item 2): a
 * qualification probe run, a dependency setup run, an operator's bundle build request. Each kind
 * has a total transition table (a state missing from the table, or a target missing from a row, is
 * an illegal move), tested over every pair; the kernel (claim, heartbeat, the abandon sweep,
 * transitions) reads these and nothing else. A new kind of background run is one row here, one
 * table in run-table.ts, and its own use cases in its folder.
 */
import { ProbeRunState, RunState } from "../db/generated/enums";

/** The state each kind's row holds: probe runs keep their own enum, whose success is a verdict (`passed`). */
export type TRunStates = { "probe-run": ProbeRunState; "setup-run": RunState; "bundle-build": RunState };
export type TRunKind = keyof TRunStates;
export type TRunState<K extends TRunKind> = TRunStates[K];

export const RUN_STATES = Object.values(RunState) as readonly RunState[];
export const PROBE_RUN_STATES = Object.values(ProbeRunState) as readonly ProbeRunState[];

/**
 * How long a running run may go without a heartbeat before the sweep fails it as abandoned: the
 * one threshold for every kind (it was 20 s for probe runs and 30 s for setup runs and build
 * requests). At least six beats of the slowest kind: a busy event loop is not a dead process.
 */
export const RUN_HEARTBEAT_STALE_MS = 30_000;

/** What the sweep writes, in the kind's own reason column, on a run it fails. */
export const ABANDONED_REASON = "the process running it stopped (killed or crashed) before it finished";

type TRunKindDefinition<TState extends string> = {
  states: readonly TState[];
  transitions: { readonly [S in TState]: readonly TState[] };
  /** How often the process running one refreshes its heartbeat (≤ RUN_HEARTBEAT_STALE_MS / 6). */
  heartbeatMs: number;
};

export const RUN_KINDS = {
  "probe-run": {
    states: PROBE_RUN_STATES,
    transitions: {
      // claimed by one runner (a worker, or the CLI in its own process)
      queued: ["running"],
      // passed only when every selected probe passed and the evidence was stored; failed otherwise,
      // or by the sweep when its runner died — never passed after that
      running: ["passed", "failed"],
      passed: [],
      failed: [],
    },
    heartbeatMs: 3_000,
  },
  "setup-run": {
    states: RUN_STATES,
    transitions: {
      // A setup run is created running by the process that runs it (inside a task's step or a build
      // request), never queued; a cancelled build fails its setup run as BUILD_CANCELLED.
      queued: [],
      running: ["succeeded", "failed"],
      succeeded: [],
      failed: [],
      cancelled: [],
    },
    heartbeatMs: 5_000,
  },
  "bundle-build": {
    states: RUN_STATES,
    transitions: {
      // claimed by a worker; failed before it started; or withdrawn by an operator while it waits
      queued: ["running", "failed", "cancelled"],
      // back to the queue while every machine slot is in use; or stopped by an operator (the runner
      // sees it at its next heartbeat and destroys the builder)
      running: ["queued", "succeeded", "failed", "cancelled"],
      succeeded: [],
      failed: [],
      cancelled: [],
    },
    // every second: a cancelled build's runner sees the cancel at its next beat
    heartbeatMs: 1_000,
  },
} as const satisfies { [K in TRunKind]: TRunKindDefinition<TRunState<K>> };

/** Kinds that wait in a queue for a worker, announced to the workers when queued (lib/db/work-ready.ts). */
export const QUEUED_RUN_KINDS = ["probe-run", "bundle-build"] as const satisfies readonly TRunKind[];
export type TQueuedRunKind = (typeof QUEUED_RUN_KINDS)[number];

export function canTransitionRun<K extends TRunKind>(kind: K, from: TRunState<K>, to: TRunState<K>): boolean {
  const row = (RUN_KINDS[kind].transitions as Record<string, readonly string[]>)[from];
  return row !== undefined && row.includes(to);
}

/** A state no move leaves: the run has ended (its finishedAt is set when it gets there). */
export function isEndedRunState<K extends TRunKind>(kind: K, state: TRunState<K>): boolean {
  return (RUN_KINDS[kind].transitions as Record<string, readonly string[]>)[state]?.length === 0;
}

/** States in which a run is not over: the request for the same thing is this one. */
export const ACTIVE_RUN_STATES = ["queued", "running"] as const satisfies readonly RunState[];
