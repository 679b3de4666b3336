/**
 * The audit log: who did what to which resource. Append-only; details are bounded and never
 * hold secrets or payloads.
 */
import type { Db, DbTx } from "./db/client";
import type { Prisma } from "./db/generated/client";

export type TAuditEntry = {
  actorId: string | null;
  action: string;
  targetType: string;
  targetId?: string | null;
  detail?: Prisma.InputJsonValue;
};

export async function recordAudit(db: Db | DbTx, entry: TAuditEntry): Promise<void> {
  await db.auditLog.create({
    data: {
      actorId: entry.actorId,
      action: entry.action,
      targetType: entry.targetType,
      targetId: entry.targetId ?? null,
      detail: entry.detail,
    },
  });
}
