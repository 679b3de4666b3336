/**
 * Reading agent profiles: the list (each with its current version), one profile with every
 * version, and the version a new task runs when it names a profile.
 */
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { ensureBuiltInAgentProfiles } from "./built-in-agent-profiles";
import { ZAgentProfileNameSchema } from "./agent-profile-schema";

export type TAgentProfileSummary = {
  id: string;
  name: string;
  owner: string;
  isBuiltIn: boolean;
  version: number;
  description: string;
  codeDigest: string | null;
  codeBytes: number | null;
  command: unknown;
  updatedAt: Date;
};

export async function listAgentProfiles(deps: { db: Db }): Promise<TAgentProfileSummary[]> {
  await ensureBuiltInAgentProfiles(deps.db);
  const profiles = await deps.db.agentProfile.findMany({
    orderBy: [{ isBuiltIn: "desc" }, { name: "asc" }],
    include: { versions: true },
  });
  return profiles.map((profile) => {
    const current = profile.versions.find((v) => v.version === profile.currentVersion)!;
    return {
      id: profile.id,
      name: profile.name,
      owner: profile.owner,
      isBuiltIn: profile.isBuiltIn,
      version: profile.currentVersion,
      description: current.description,
      codeDigest: current.codeDigest,
      codeBytes: current.codeBytes,
      command: current.command,
      updatedAt: profile.updatedAt,
    };
  });
}

export async function getAgentProfile(deps: { db: Db }, { name }: { name: string }) {
  await ensureBuiltInAgentProfiles(deps.db);
  const parsed = ZAgentProfileNameSchema.safeParse(name);
  const profile = parsed.success
    ? await deps.db.agentProfile.findUnique({
        where: { name: parsed.data },
        include: { versions: { orderBy: { version: "desc" } } },
      })
    : null;
  if (!profile) throw new AppError("NOT_FOUND", `There is no agent profile named ${name.slice(0, 100)}.`);
  return profile;
}

/** The current version of the named profile: what a task created now records and runs. */
export async function resolveAgentProfileVersion(db: Db, name: string) {
  const parsed = ZAgentProfileNameSchema.safeParse(name);
  if (parsed.success) await ensureBuiltInAgentProfiles(db);
  const profile = parsed.success ? await db.agentProfile.findUnique({ where: { name: parsed.data } }) : null;
  if (!profile)
    throw new AppError("VALIDATION_FAILED", `There is no agent profile named ${name.slice(0, 100)}.`, {
      fieldErrors: { agent: ["no such agent profile"] },
    });
  return db.agentProfileVersion.findUniqueOrThrow({
    where: { profileId_version: { profileId: profile.id, version: profile.currentVersion } },
    include: { profile: true },
  });
}
