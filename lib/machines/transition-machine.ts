/**
 * One machine transition = one transaction: compare-and-set plus the transition-log row (the
 * shared kernel: lib/db/compare-and-set.ts). What is machine-specific lives here: the caller's
 * extra columns, the destruction time, and the last error of a quarantined or failed machine.
 */
import { compareAndSetState } from "../db/compare-and-set";
import type { Db, DbTx } from "../db/client";
import type { MachineState } from "../db/generated/enums";
import type { Prisma } from "../db/generated/client";
import { canTransitionMachine } from "./machine-states";

export type TransitionMachineOptions = {
  machineId: string;
  from: MachineState;
  to: MachineState;
  reason?: string;
  data?: Omit<Prisma.GuestMachineUpdateManyMutationInput, "state">;
};

export async function transitionMachineIn(tx: DbTx, options: TransitionMachineOptions) {
  const { machineId, from, to } = options;
  return compareAndSetState({
    entity: "machine",
    table: tx.guestMachine,
    id: machineId,
    from,
    to,
    canTransition: canTransitionMachine,
    reason: options.reason,
    data: (reason) => ({
      ...options.data,
      ...(to === "destroyed" ? { destroyedAt: new Date() } : {}),
      ...(reason && (to === "cleanup_quarantined" || to === "failed") ? { lastError: reason } : {}),
    }),
    writeLog: (entry) => tx.machineTransition.create({ data: { machineId, ...entry } }),
  });
}

export async function transitionMachine(db: Db, options: TransitionMachineOptions) {
  return db.$transaction((tx) => transitionMachineIn(tx, options));
}
