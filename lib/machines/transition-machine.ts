/**
 * One machine transition = one transaction: compare-and-set plus the transition-log row.
 */
import type { Db, DbTx } from "../db/client";
import type { MachineState } from "../db/generated/enums";
import type { Prisma } from "../db/generated/client";
import { AppError } from "../errors";
import { sanitizeExcerpt } from "../redact";
import { canTransitionMachine } from "./machine-states";
import { MAX_REASON_BYTES } from "../tasks/transition-task";

export type TransitionMachineOptions = {
  machineId: string;
  from: MachineState;
  to: MachineState;
  reason?: string;
  data?: Omit<Prisma.GuestMachineUpdateManyMutationInput, "state">;
};

export async function transitionMachineIn(tx: DbTx, options: TransitionMachineOptions) {
  const { machineId, from, to } = options;
  if (!canTransitionMachine(from, to)) throw new AppError("STATE_CONFLICT", `Illegal machine transition ${from} → ${to}.`);
  const reason = options.reason === undefined ? undefined : sanitizeExcerpt(options.reason, MAX_REASON_BYTES);
  const updated = await tx.guestMachine.updateMany({
    where: { id: machineId, state: from },
    data: {
      ...options.data,
      state: to,
      ...(to === "destroyed" ? { destroyedAt: new Date() } : {}),
      ...(reason && (to === "cleanup_quarantined" || to === "failed") ? { lastError: reason } : {}),
    },
  });
  if (updated.count !== 1) {
    const current = await tx.guestMachine.findUnique({ where: { id: machineId }, select: { state: true } });
    throw new AppError(
      "STATE_CONFLICT",
      current ? `Machine ${machineId} is ${current.state}, not ${from}.` : `Machine ${machineId} does not exist.`,
      { current: current?.state },
    );
  }
  const machine = await tx.guestMachine.findUniqueOrThrow({ where: { id: machineId } });
  await tx.machineTransition.create({
    data: { machineId, fromState: from, toState: to, operationId: machine.operationId, attempt: machine.attempt, reason },
  });
  return machine;
}

export async function transitionMachine(db: Db, options: TransitionMachineOptions) {
  return db.$transaction((tx) => transitionMachineIn(tx, options));
}
