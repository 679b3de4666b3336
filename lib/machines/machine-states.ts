/**
 * The guest machine state machine. `failed` means no provider machine exists (a create that was
 * refused outright); an ambiguous create or a failed destroy is `cleanup_quarantined`, which only
 * an operator's successful re-destroy can leave. A `destroyed` or `failed` machine the provider
 * shows again is quarantined too: the records must not call a live guest gone.
 */
import type { MachineState } from "../db/generated/enums";

export const MACHINE_STATES = [
  "requested",
  "created",
  "started",
  "ready",
  "exported",
  "destroyed",
  "cleanup_quarantined",
  "failed",
] as const satisfies readonly MachineState[];

const END = ["destroyed", "cleanup_quarantined"] as const;

export const MACHINE_TRANSITIONS = {
  requested: ["created", "failed", "cleanup_quarantined"],
  created: ["started", ...END],
  started: ["ready", ...END],
  ready: ["exported", ...END],
  exported: [...END],
  // Recorded gone, then seen again at the provider by the orphan sweep: the delete (or the create
  // we believed refused) was not what the provider did — an operator decides (issue 12, item 12).
  destroyed: ["cleanup_quarantined"],
  cleanup_quarantined: ["destroyed"],
  failed: ["cleanup_quarantined"],
} as const satisfies Record<MachineState, readonly MachineState[]>;

/** A machine in one of these states may exist at the provider and must be destroyed. */
export const LIVE_MACHINE_STATES = [
  "requested",
  "created",
  "started",
  "ready",
  "exported",
] as const satisfies readonly MachineState[];

export function canTransitionMachine(from: MachineState, to: MachineState): boolean {
  return (MACHINE_TRANSITIONS[from] as readonly MachineState[]).includes(to);
}
