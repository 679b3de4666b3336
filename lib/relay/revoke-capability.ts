/**
 * Revokes a capability (or every capability of a task). Idempotent — revoking again changes
 * nothing and keeps the first reason — and permanent: no code path clears revokedAt. The
 * lifecycle calls this on every terminal path (success, blocked, cleanup failure).
 */
import { recordAudit } from "../audit";
import { actorIdOf, type Actor } from "../contract/actor";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { sanitizeExcerpt } from "../redact";
import { settleModelSpend } from "../spend/model-spend";
import { revokeCapabilityRows } from "./capability.repo";
import { RELAY_MAX_REASON_CHARS } from "./limits";
import { ZTaskIdSchema } from "./relay-request";

export type TRevokeCapabilityInput = {
  reason: string;
  actor?: Actor | null;
  via?: string;
} & ({ taskId: string; capabilityId?: undefined } | { capabilityId: string; taskId?: undefined });

export type TRevokeResult = { revokedCapabilityIds: string[] };

export async function revokeCapability(deps: { db: Db }, input: TRevokeCapabilityInput): Promise<TRevokeResult> {
  const { db } = deps;
  const { actor = null, via = "system" } = input;
  const actorId = actorIdOf(actor);
  const id = input.capabilityId ?? input.taskId;
  if (!ZTaskIdSchema.safeParse(id).success)
    throw new AppError("VALIDATION_FAILED", "A capability id or task id (UUID) is required.");
  const reason = sanitizeExcerpt(input.reason.trim() || "revoked", RELAY_MAX_REASON_CHARS);
  const revokedCapabilityIds = await revokeCapabilityRows(
    db,
    { capabilityId: input.capabilityId, taskId: input.taskId },
    reason,
  );
  // The model reservation ends with the capability: what its calls cost replaces it in the ledger.
  for (const capabilityId of revokedCapabilityIds)
    await settleModelSpend(db, capabilityId, `relay capability revoked: ${reason}`);
  if (revokedCapabilityIds.length > 0) {
    await recordAudit(db, {
      actorId,
      action: "relay.revoke",
      targetType: input.capabilityId ? "relay_capability" : "task",
      targetId: id,
      detail: { via, reason, capabilityIds: revokedCapabilityIds },
    });
  }
  return { revokedCapabilityIds };
}
