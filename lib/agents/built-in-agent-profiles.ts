/**
 * The reference agents School-Core ships, as profiles (isBuiltIn): they have no code of their own
 * — their programs are among the guest programs the worker uploads with every task — so a built-in
 * profile is only a name for a command. Seeded idempotently (the demo seeding, and before profiles
 * are listed or chosen), never edited. The default for a task that names no profile stays the
 * `guest.agent` setting, which the qualification probes run under.
 */
import { recordAudit } from "../audit";
import {
  GUEST_ANTHROPIC_AGENT_PROGRAM,
  GUEST_OPENAI_AGENT_PROGRAM,
  GUEST_STUDENT_AGENT_PROGRAM,
} from "../contract/guest-layout";
import type { Db } from "../db/client";

export const BUILT_IN_AGENT_PROFILES = [
  {
    name: "reference-openai",
    owner: "School-Core",
    description:
      "The tool-using reference agent on the official openai SDK (guest/openai-agent.mjs): streamed, four tools.",
    command: ["node", GUEST_OPENAI_AGENT_PROGRAM],
  },
  {
    name: "reference-anthropic",
    owner: "School-Core",
    description: "The same agent on the official @anthropic-ai/sdk (guest/anthropic-agent.mjs).",
    command: ["node", GUEST_ANTHROPIC_AGENT_PROGRAM],
  },
  {
    name: "reference-text",
    owner: "School-Core",
    description: "The text-only reference agent (guest/student-agent.mjs): asks the relay for a patch and applies it.",
    command: ["node", GUEST_STUDENT_AGENT_PROGRAM],
  },
] as const;

export async function ensureBuiltInAgentProfiles(db: Db): Promise<void> {
  const existing = new Set(
    (
      await db.agentProfile.findMany({
        where: { name: { in: BUILT_IN_AGENT_PROFILES.map((p) => p.name) } },
        select: { name: true },
      })
    ).map((p) => p.name),
  );
  for (const builtIn of BUILT_IN_AGENT_PROFILES) {
    if (existing.has(builtIn.name)) continue;
    try {
      await db.$transaction(async (tx) => {
        const profile = await tx.agentProfile.create({
          data: { name: builtIn.name, owner: builtIn.owner, isBuiltIn: true, currentVersion: 1 },
        });
        await tx.agentProfileVersion.create({
          data: {
            profileId: profile.id,
            version: 1,
            description: builtIn.description,
            command: [...builtIn.command],
            environment: {},
          },
        });
        await recordAudit(tx, {
          actorId: null,
          action: "agent.add",
          targetType: "agent_profile",
          targetId: profile.id,
          detail: { name: profile.name, builtIn: true, version: 1 },
        });
      });
    } catch (error) {
      // Another process seeded it first: the same row, nothing to do.
      if ((error as { code?: string }).code !== "P2002") throw error;
    }
  }
}
