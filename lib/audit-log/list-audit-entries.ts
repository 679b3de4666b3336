/**
 * The audit trail as the operator reads it: newest first, filtered by actor, kind and date,
 * paged. A "kind" is a family of actions (every setting write, every task action …); the
 * dispatch gate is its own kind because toggling it is a decision an operator looks for.
 */
import { z } from "zod";
import type { Db } from "../db/client";
import type { Prisma } from "../db/generated/client";
import { listPaged, pagedListFields } from "../paging";

export const AUDIT_KINDS = {
  setting: { label: "Setting changes", where: { action: "setting.write", NOT: { targetId: "dispatch" } } },
  dispatch: {
    label: "Dispatch gate",
    where: { OR: [{ action: { startsWith: "dispatch." } }, { action: "setting.write", targetId: "dispatch" }] },
  },
  manifest: { label: "Trusted checks", where: { action: { startsWith: "manifest." } } },
  quarantine: { label: "Quarantine", where: { action: { startsWith: "quarantine." } } },
  review: { label: "Review decisions", where: { action: { startsWith: "review." } } },
  task: { label: "Tasks (create, cancel, retry, re-verify)", where: { action: { startsWith: "task." } } },
  user: { label: "Users", where: { action: { startsWith: "user." } } },
  repository: { label: "Repositories", where: { action: { startsWith: "repository." } } },
  relay: { label: "Relay", where: { action: { startsWith: "relay." } } },
  publication: { label: "Publication", where: { action: { startsWith: "publication." } } },
  probe: { label: "Probes", where: { action: { startsWith: "probe." } } },
} as const satisfies Record<string, { label: string; where: Prisma.AuditLogWhereInput }>;
export type TAuditKind = keyof typeof AUDIT_KINDS;

export const ZListAuditEntriesSchema = z
  .object({
    /** a user id, or "system" for entries without an actor (the worker, the CLI without a user) */
    actor: z.union([z.uuid(), z.literal("system")]).optional(),
    kind: z.enum(Object.keys(AUDIT_KINDS) as [TAuditKind, ...TAuditKind[]]).optional(),
    ...pagedListFields(500),
  })
  .strict();
export type TListAuditEntriesInput = z.input<typeof ZListAuditEntriesSchema>;

export async function listAuditEntries(deps: { db: Db }, fields: TListAuditEntriesInput) {
  return listPaged({
    schema: ZListAuditEntriesSchema,
    fields,
    label: "audit filter",
    where: (input, createdAt): Prisma.AuditLogWhereInput => {
      const and: Prisma.AuditLogWhereInput[] = [];
      if (input.actor) and.push({ actorId: input.actor === "system" ? null : input.actor });
      if (input.kind) and.push(AUDIT_KINDS[input.kind].where);
      if (createdAt) and.push({ createdAt });
      return and.length > 0 ? { AND: and } : {};
    },
    count: (where) => deps.db.auditLog.count({ where }),
    findMany: (where, window) =>
      deps.db.auditLog.findMany({
        where,
        orderBy: { id: "desc" },
        ...window,
        include: { actor: { select: { email: true } } },
      }),
    map: (row) => ({
      id: row.id.toString(),
      createdAt: row.createdAt,
      actorId: row.actorId,
      actorEmail: row.actor?.email ?? null,
      action: row.action,
      targetType: row.targetType,
      targetId: row.targetId,
      detail: row.detail,
    }),
  });
}

export type TAuditEntry = Awaited<ReturnType<typeof listAuditEntries>>["items"][number];
