/**
 * Revokes a capability (or every capability of a task). Idempotent — revoking again changes
 * nothing and keeps the first reason — and permanent: no code path clears revokedAt. The
 * lifecycle calls this on every terminal path (success, blocked, cleanup failure).
 */
import { recordAudit } from "../audit";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { sanitizeExcerpt } from "../redact";
import { revokeCapabilityRows } from "./capability.repo";
import { RELAY_MAX_REASON_CHARS } from "./limits";
import { ZTaskIdSchema } from "./relay-request";

export type TRevokeCapabilityOptions = {
  db: Db;
  reason: string;
  actorId?: string | null;
  via?: string;
} & ({ taskId: string; capabilityId?: undefined } | { capabilityId: string; taskId?: undefined });

export type TRevokeResult = { revokedCapabilityIds: string[] };

export async function revokeCapability(options: TRevokeCapabilityOptions): Promise<TRevokeResult> {
  const { db, actorId = null, via = "system" } = options;
  const id = options.capabilityId ?? options.taskId;
  if (!ZTaskIdSchema.safeParse(id).success) throw new AppError("VALIDATION_FAILED", "A capability id or task id (UUID) is required.");
  const reason = sanitizeExcerpt(options.reason.trim() || "revoked", RELAY_MAX_REASON_CHARS);
  const revokedCapabilityIds = await revokeCapabilityRows(db, { capabilityId: options.capabilityId, taskId: options.taskId }, reason);
  if (revokedCapabilityIds.length > 0) {
    await recordAudit(db, {
      actorId,
      action: "relay.revoke",
      targetType: options.capabilityId ? "relay_capability" : "task",
      targetId: id,
      detail: { via, reason, capabilityIds: revokedCapabilityIds },
    });
  }
  return { revokedCapabilityIds };
}
