"use server";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { withActorAction } from "@/app/_server/action";
import { addAgentProfile } from "@/lib/agents/add-agent-profile";
import { parseEnvironmentPairs } from "@/lib/agents/agent-environment";
import { editAgentProfile } from "@/lib/agents/edit-agent-profile";
import { getDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { PROBE_IDS } from "@/lib/probes/probe-registry";
import { requestProfileImageProbeRun } from "@/lib/probes/image-qualification";

const ZProfileFormSchema = z.object({
  name: z.string().max(100),
  owner: z.string().max(200).optional(),
  description: z.string().max(2000).optional(),
  command: z.string().max(70_000).optional(),
  environment: z.string().max(200_000).optional(),
  /** code the page uploaded first (PUT /api/operator/agent-code): its digest, checked again by the use case */
  codeDigest: z.string().max(100).optional(),
});

function commandOf(text: string | undefined): string[] | undefined {
  if (!text?.trim()) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed)) return parsed as string[];
  } catch {
    // reported below, next to the field
  }
  throw new AppError("VALIDATION_FAILED", "The command is a JSON array of strings.", {
    fieldErrors: { command: ['a JSON array of strings, e.g. ["node","agent.mjs"]'] },
  });
}

function environmentOf(text: string | undefined): Record<string, string> | undefined {
  if (text === undefined) return undefined;
  const parsed = parseEnvironmentPairs(text.split(/\r?\n/).filter((line) => line.trim()));
  if (parsed.kind === "refused")
    throw new AppError("VALIDATION_FAILED", parsed.reason, { fieldErrors: { environment: [parsed.reason] } });
  return parsed.env;
}

// The bytes never come through the action (Next caps a server action's body at 1 MB): the page
// uploads them to the route first and sends back only the digest it answered.
function codeOf(digest: string | undefined) {
  return digest ? { kind: "stored" as const, digest } : undefined;
}

export const addAgentProfileAction = withActorAction({
  action: "agent.manage",
  schema: ZProfileFormSchema,
  handler: async ({ actor, input }) => {
    const [db, env] = [await getDb(), getEnv()];
    const command = commandOf(input.command);
    if (!command) return { ok: false, error: "A command is required.", fieldErrors: { command: ["required"] } };
    const { profile } = await addAgentProfile(
      { db, dataDir: env.dataDir },
      {
        name: input.name,
        owner: input.owner,
        description: input.description,
        command,
        environment: environmentOf(input.environment) ?? {},
        code: codeOf(input.codeDigest),
        actor,
      },
    );
    revalidatePath("/operator/agents");
    return { ok: true, message: `${profile.name} v1 added.` };
  },
});

export const editAgentProfileAction = withActorAction({
  action: "agent.manage",
  schema: ZProfileFormSchema,
  handler: async ({ actor, input }) => {
    const [db, env] = [await getDb(), getEnv()];
    const { profile, version } = await editAgentProfile(
      { db, dataDir: env.dataDir },
      {
        name: input.name,
        owner: input.owner,
        description: input.description,
        command: commandOf(input.command),
        environment: environmentOf(input.environment),
        code: codeOf(input.codeDigest),
        actor,
      },
    );
    revalidatePath(`/operator/agents/${profile.name}`);
    revalidatePath("/operator/agents");
    return { ok: true, message: `${profile.name} is now v${version.version}.` };
  },
});

/**
 * "Run the probes for this image": every probe, for the configuration in force with the profile's
 * own guest image in place of guest.image. Audited as `probe.run` (naming the profile and image),
 * queued for the worker like the probes page's run.
 */
export const requestProfileImageProbeRunAction = withActorAction({
  action: "probe.run",
  schema: z.object({ name: z.string().max(100) }),
  handler: async ({ actor, input }) => {
    const run = await requestProfileImageProbeRun(
      { db: await getDb(), env: getEnv() },
      { profile: input.name, probes: [...PROBE_IDS], actor },
    );
    revalidatePath(`/operator/agents/${input.name}`);
    revalidatePath("/operator/probes");
    return { ok: true, message: `Probe run ${run.id} queued for the image of ${input.name}.`, id: run.id };
  },
});
