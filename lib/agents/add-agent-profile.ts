/**
 * Adding an agent profile: version 1 with its command, environment and (optionally) its code,
 * validated and stored content-addressed before the rows are written. Audited. Not a setting:
 * adding a profile leaves the dispatch gate as it is (README, "Agent profiles").
 */
import type { z } from "zod";
import { recordAudit } from "../audit";
import { actorIdOf, type Actor } from "../contract/actor";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { ZAddAgentProfileSchema } from "./agent-profile-schema";
import { storeAgentCode, type TAgentCodeSource } from "./store-agent-code";

export type TAddAgentProfileInput = z.input<typeof ZAddAgentProfileSchema> & {
  actor: Actor | null;
  code?: TAgentCodeSource;
};

export async function addAgentProfile(
  deps: { db: Db; dataDir: string },
  { actor, code, ...fields }: TAddAgentProfileInput,
) {
  const actorId = actorIdOf(actor);
  const { db } = deps;
  const input = parseOrThrow(ZAddAgentProfileSchema, fields, { code: "VALIDATION_FAILED", label: "agent profile" });
  if (await db.agentProfile.findUnique({ where: { name: input.name } }))
    throw new AppError(
      "ALREADY_EXISTS",
      `An agent profile named ${input.name} already exists; edit it to add a version.`,
    );
  const stored = code ? await storeAgentCode({ db, dataDir: deps.dataDir }, code) : null;
  try {
    return await db.$transaction(async (tx) => {
      const profile = await tx.agentProfile.create({
        data: { name: input.name, owner: input.owner, currentVersion: 1, createdById: actorId },
      });
      const version = await tx.agentProfileVersion.create({
        data: {
          profileId: profile.id,
          version: 1,
          description: input.description,
          command: input.command,
          ...(input.image ? { image: input.image } : {}),
          environment: input.environment,
          codeDigest: stored?.digest ?? null,
          codeBytes: stored?.bytes ?? null,
          dependencyRecipe: stored?.dependencies?.recipe ?? null,
          dependencyLockfileDigest: stored?.dependencies?.lockfileDigest ?? null,
          createdById: actorId,
        },
      });
      await recordAudit(tx, {
        actorId,
        action: "agent.add",
        targetType: "agent_profile",
        targetId: profile.id,
        detail: {
          name: profile.name,
          owner: profile.owner,
          version: 1,
          codeDigest: version.codeDigest,
          dependencyRecipe: version.dependencyRecipe,
          image: input.image,
          variables: Object.keys(input.environment),
        },
      });
      return { profile, version };
    });
  } catch (error) {
    if ((error as { code?: string }).code === "P2002")
      throw new AppError("ALREADY_EXISTS", `An agent profile named ${input.name} already exists.`);
    throw error;
  }
}
