/**
 * Target repositories: the operator's list of repositories tasks may work on. Names are
 * canonical (`owner/name`, lower case); the clone URL is where the control plane fetches from
 * and publishes to.
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import type { Db } from "../db/client";
import { ZRepositoryNameSchema } from "../contract/task-request";
import { AppError } from "../errors";

export const ZAddTargetRepositorySchema = z
  .object({
    name: z.string().trim().toLowerCase().pipe(ZRepositoryNameSchema),
    cloneUrl: z
      .string()
      .trim()
      .max(1000)
      .refine((v) => /^(https?:\/\/|file:\/\/|\/)/.test(v), "a http(s) URL, a file:// URL or an absolute path")
      .refine((v) => !/^https?:\/\/[^/]*@/.test(v), "credentials do not belong in the URL; the control plane supplies them"),
    defaultBranch: z.string().trim().min(1).max(250).regex(/^[A-Za-z0-9._/-]+$/).default("main"),
  })
  .strict();

export async function addTargetRepository(db: Db, input: z.input<typeof ZAddTargetRepositorySchema>, actorId: string | null) {
  const parsed = ZAddTargetRepositorySchema.safeParse(input);
  if (!parsed.success) throw new AppError("VALIDATION_FAILED", `${parsed.error.issues[0]!.path.join(".")}: ${parsed.error.issues[0]!.message}`);
  try {
    return await db.$transaction(async (tx) => {
      const repo = await tx.targetRepository.create({ data: parsed.data });
      await recordAudit(tx, { actorId, action: "repository.add", targetType: "repository", targetId: repo.id, detail: { name: repo.name } });
      return repo;
    });
  } catch (error) {
    if ((error as { code?: string }).code === "P2002") throw new AppError("ALREADY_EXISTS", `Repository ${parsed.data.name} is already a target.`);
    throw error;
  }
}

export async function listTargetRepositories(db: Db) {
  return db.targetRepository.findMany({ orderBy: { name: "asc" } });
}

export async function getTargetRepositoryOrThrow(db: Db, name: string) {
  const repo = await db.targetRepository.findUnique({ where: { name: name.trim().toLowerCase() } });
  if (!repo) throw new AppError("NOT_FOUND", `Repository ${name.slice(0, 200)} is not a target. Add it with \`schoolcore repo add\`.`);
  return repo;
}
