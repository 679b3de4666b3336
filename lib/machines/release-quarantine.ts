/**
 * Leaving quarantine takes an operator, a reason, and a destroy that works: the destroy is
 * retried first; only a machine the provider's get and list then show gone is released.
 */
import { z } from "zod";
import { actorIdOf, type Actor } from "../contract/actor";
import { ZAuditReasonSchema } from "../contract/audit-reason";
import { recordAudit } from "../audit";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { createSpendGuard } from "../spend/spend-guard";
import { isSubstrateError } from "../substrate/substrate-error";
import type { TaskRunContext } from "../tasks/task-run-context";
import { confirmMachineGone } from "./guest-machines";
import { transitionMachineIn } from "./transition-machine";

/** A release is a destroy observed like any other (issue 12, item 12): the provider must show it gone. */
async function throwUnlessGone(
  substrate: TaskRunContext["substrate"],
  machine: { providerId: string | null; providerName: string },
): Promise<void> {
  if (!(await confirmMachineGone(substrate, machine)))
    throw new AppError(
      "SUBSTRATE_FAILED",
      `The provider still shows machine ${machine.providerId ?? machine.providerName} after the delete, so it stays quarantined.`,
    );
}

export const ZReleaseQuarantineSchema = z.object({ machineId: z.uuid(), reason: ZAuditReasonSchema }).strict();

export async function releaseQuarantine(
  deps: Pick<TaskRunContext, "db" | "substrate">,
  { actor, ...fields }: z.input<typeof ZReleaseQuarantineSchema> & { actor: Actor },
) {
  const actorId = actorIdOf(actor);
  const { machineId, reason } = parseOrThrow(ZReleaseQuarantineSchema, fields, {
    code: "VALIDATION_FAILED",
    label: "quarantine release",
  });
  const { db, substrate } = deps;
  const machine = await db.guestMachine.findUnique({ where: { id: machineId } });
  if (!machine) throw new AppError("NOT_FOUND", "No such machine.");
  if (machine.state !== "cleanup_quarantined")
    throw new AppError("STATE_CONFLICT", `Machine ${machine.id} is ${machine.state}, not quarantined.`);

  let outcome: string;
  if (!machine.providerId) {
    const found = await substrate.findByName(machine.providerName);
    if (found) {
      await substrate.destroy(found.id);
      await throwUnlessGone(substrate, { providerId: found.id, providerName: machine.providerName });
      outcome = `destroyed ${found.id} (found by name)`;
    } else outcome = "the provider has no machine of this name";
  } else {
    try {
      const result = await substrate.destroy(machine.providerId);
      outcome = result.kind === "deleted" ? "destroyed on retry" : "the provider no longer knows this machine";
      await throwUnlessGone(substrate, machine);
      if (result.kind === "deleted")
        await createSpendGuard(db).settle({
          machineName: machine.providerName,
          actualMicros: result.usage?.cost.totalMicros,
          note: "usage on quarantine release",
        });
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw new AppError(
        "SUBSTRATE_FAILED",
        `The destroy failed again, so the machine stays quarantined: ${isSubstrateError(error) || error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  return db.$transaction(async (tx) => {
    const updated = await transitionMachineIn(tx, {
      machineId,
      from: "cleanup_quarantined",
      to: "destroyed",
      reason: `quarantine released: ${outcome}; operator reason: ${reason}`,
    });
    await tx.quarantineRecord.update({
      where: { machineId },
      data: { releasedAt: new Date(), releasedById: actorId, releaseReason: reason },
    });
    await recordAudit(tx, {
      actorId,
      action: "quarantine.release",
      targetType: "machine",
      targetId: machineId,
      detail: { outcome, reason },
    });
    return updated;
  });
}
