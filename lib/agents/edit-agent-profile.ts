/**
 * Editing an agent profile adds a version and moves currentVersion to it; earlier versions are
 * never changed, so a task keeps running (and showing) the version it was created with. What the
 * edit does not give is carried over from the current version, the code too. A built-in profile
 * mirrors what School-Core ships and is not edited. Audited; not a setting (the gate stays).
 */
import type { z } from "zod";
import { recordAudit } from "../audit";
import { actorIdOf, type Actor } from "../contract/actor";
import type { Db } from "../db/client";
import type { Prisma } from "../db/generated/client";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { ZAgentProfileFieldsSchema, ZEditAgentProfileSchema } from "./agent-profile-schema";
import { storeAgentCode, type TAgentCodeSource } from "./store-agent-code";

export type TEditAgentProfileInput = z.input<typeof ZEditAgentProfileSchema> & {
  actor: Actor | null;
  code?: TAgentCodeSource;
};

export async function editAgentProfile(
  deps: { db: Db; dataDir: string },
  { actor, code, ...fields }: TEditAgentProfileInput,
) {
  const actorId = actorIdOf(actor);
  const { db } = deps;
  const input = parseOrThrow(ZEditAgentProfileSchema, fields, { code: "VALIDATION_FAILED", label: "agent profile" });
  const profile = await db.agentProfile.findUnique({ where: { name: input.name } });
  if (!profile) throw new AppError("NOT_FOUND", `There is no agent profile named ${input.name}.`);
  if (profile.isBuiltIn)
    throw new AppError(
      "STATE_CONFLICT",
      `${profile.name} is a built-in reference agent; add a profile of your own to change it.`,
    );
  const current = await db.agentProfileVersion.findUniqueOrThrow({
    where: { profileId_version: { profileId: profile.id, version: profile.currentVersion } },
  });
  const merged = parseOrThrow(
    ZAgentProfileFieldsSchema,
    {
      owner: input.owner ?? profile.owner,
      description: input.description ?? current.description,
      command: input.command ?? current.command,
      image: input.image === undefined ? current.image : input.image,
      environment: input.environment ?? current.environment,
    },
    { code: "VALIDATION_FAILED", label: "agent profile" },
  );
  const stored = code ? await storeAgentCode({ db, dataDir: deps.dataDir }, code) : null;
  const next = profile.currentVersion + 1;
  try {
    return await db.$transaction(async (tx) => {
      // Compare-and-set on the version number: two edits at once make one version each, or one conflict.
      const moved = await tx.agentProfile.updateMany({
        where: { id: profile.id, currentVersion: profile.currentVersion },
        data: { currentVersion: next, owner: merged.owner },
      });
      if (moved.count === 0)
        throw new AppError("STATE_CONFLICT", `${profile.name} was edited at the same time; try again.`);
      const version = await tx.agentProfileVersion.create({
        data: {
          profileId: profile.id,
          version: next,
          description: merged.description,
          command: merged.command,
          ...(merged.image ? { image: merged.image as Prisma.InputJsonValue } : {}),
          environment: merged.environment,
          codeDigest: stored ? stored.digest : current.codeDigest,
          codeBytes: stored ? stored.bytes : current.codeBytes,
          dependencyRecipe: stored ? (stored.dependencies?.recipe ?? null) : current.dependencyRecipe,
          dependencyLockfileDigest: stored
            ? (stored.dependencies?.lockfileDigest ?? null)
            : current.dependencyLockfileDigest,
          createdById: actorId,
        },
      });
      await recordAudit(tx, {
        actorId,
        action: "agent.edit",
        targetType: "agent_profile",
        targetId: profile.id,
        detail: {
          name: profile.name,
          owner: merged.owner,
          version: next,
          previousVersion: profile.currentVersion,
          codeDigest: version.codeDigest,
          dependencyRecipe: version.dependencyRecipe,
          image: merged.image,
          variables: Object.keys(merged.environment),
        },
      });
      return { profile: { ...profile, currentVersion: next, owner: merged.owner }, version };
    });
  } catch (error) {
    if ((error as { code?: string }).code === "P2002")
      throw new AppError("STATE_CONFLICT", `${profile.name} was edited at the same time; try again.`);
    throw error;
  }
}
