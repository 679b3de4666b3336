/**
 * Target repositories: the operator's list of repositories tasks may work on. Names are
 * canonical (`owner/name`, lower case); the clone URL is where the control plane fetches from
 * and publishes to — https, or http on loopback for the local forge (issue 12, item 10).
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import { actorIdOf, type Actor } from "../contract/actor";
import type { Db } from "../db/client";
import { ZRepositoryNameSchema } from "../contract/task-request";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { checkTargetCloneUrl } from "./clone-url";

export const ZAddTargetRepositorySchema = z
  .object({
    name: z.string().trim().toLowerCase().pipe(ZRepositoryNameSchema),
    cloneUrl: z
      .string()
      .trim()
      .max(1000)
      // https only (loopback http for the local forge; a local path never crosses a network): clone-url.ts
      .superRefine((v, ctx) => {
        const check = checkTargetCloneUrl(v);
        if (check.kind === "refused") ctx.addIssue({ code: "custom", message: check.reason });
      }),
    defaultBranch: z
      .string()
      .trim()
      .min(1)
      .max(250)
      .regex(/^[A-Za-z0-9._/-]+$/)
      .default("main"),
  })
  .strict();

export async function addTargetRepository(
  deps: { db: Db },
  { actor, ...fields }: z.input<typeof ZAddTargetRepositorySchema> & { actor: Actor | null },
) {
  const actorId = actorIdOf(actor);
  const { db } = deps;
  const data = parseOrThrow(ZAddTargetRepositorySchema, fields, { code: "VALIDATION_FAILED", label: "repository" });
  try {
    return await db.$transaction(async (tx) => {
      const repo = await tx.targetRepository.create({ data });
      await recordAudit(tx, {
        actorId,
        action: "repository.add",
        targetType: "repository",
        targetId: repo.id,
        detail: { name: repo.name },
      });
      return repo;
    });
  } catch (error) {
    if ((error as { code?: string }).code === "P2002")
      throw new AppError("ALREADY_EXISTS", `Repository ${data.name} is already a target.`);
    throw error;
  }
}

export async function listTargetRepositories(deps: { db: Db }) {
  return deps.db.targetRepository.findMany({ where: { probeRunId: null }, orderBy: { name: "asc" } });
}

export async function getTargetRepositoryOrThrow(deps: { db: Db }, { name }: { name: string }) {
  const repo = await deps.db.targetRepository.findUnique({ where: { name: name.trim().toLowerCase() } });
  if (!repo)
    throw new AppError(
      "NOT_FOUND",
      `Repository ${name.slice(0, 200)} is not a target. Add it with \`schoolcore repo add\`.`,
    );
  return repo;
}
