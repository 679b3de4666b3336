/**
 * An operator disables (or enables again) a target repository: a disabled one takes no new
 * tasks; its tasks, candidates and pull requests stay. Audited with the reason.
 */
import { z } from "zod";
import { actorIdOf, type Actor } from "../contract/actor";
import { ZAuditReasonSchema } from "../contract/audit-reason";
import { recordAudit } from "../audit";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";

export const ZSetRepositoryDisabledSchema = z
  .object({
    repositoryId: z.uuid(),
    isDisabled: z.enum(["true", "false"]).transform((v) => v === "true"),
    reason: ZAuditReasonSchema,
  })
  .strict();

export async function setRepositoryDisabled(
  deps: { db: Db },
  { actor, ...fields }: z.input<typeof ZSetRepositoryDisabledSchema> & { actor: Actor | null },
) {
  const actorId = actorIdOf(actor);
  const input = parseOrThrow(ZSetRepositoryDisabledSchema, fields, { code: "VALIDATION_FAILED", label: "repository" });
  return deps.db.$transaction(async (tx) => {
    const repo = await tx.targetRepository.findUnique({ where: { id: input.repositoryId } });
    if (!repo || repo.probeRunId) throw new AppError("NOT_FOUND", "No such repository.");
    const updated = await tx.targetRepository.update({
      where: { id: repo.id },
      data: { isDisabled: input.isDisabled },
    });
    await recordAudit(tx, {
      actorId,
      action: input.isDisabled ? "repository.disable" : "repository.enable",
      targetType: "repository",
      targetId: repo.id,
      detail: { name: repo.name, reason: input.reason },
    });
    return updated;
  });
}

/** Target repositories as the operator page lists them (probe disposables hidden), with task counts. */
export async function listRepositoriesForOperator(deps: { db: Db }) {
  const rows = await deps.db.targetRepository.findMany({
    where: { probeRunId: null },
    orderBy: { name: "asc" },
    include: { _count: { select: { tasks: true } } },
  });
  return rows.map((r) => ({
    id: r.id,
    name: r.name,
    cloneUrl: r.cloneUrl,
    defaultBranch: r.defaultBranch,
    isDisabled: r.isDisabled,
    createdAt: r.createdAt,
    taskCount: r._count.tasks,
  }));
}
