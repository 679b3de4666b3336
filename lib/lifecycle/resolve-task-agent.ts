/**
 * Which student agent a task's guest runs, decided at provisioning: a qualification probe's own
 * fixed command (on the image its probe run records: the run may be qualifying a profile's own
 * image); else the agent profile version the task recorded at creation (issue 26) — its command,
 * environment, code and, optionally, a guest image of its own; else the operator's default, the
 * `guest.agent` setting. The guest image is the `guest.image` setting, or the profile's own image
 * only while that image is qualified: the latest completed probe run for "the configuration in
 * force with that image as the guest image" passed every probe (lib/probes/image-qualification.ts),
 * otherwise the task is refused here, before any machine exists (AGENT_IMAGE_NOT_QUALIFIED). A
 * profile's code and command change only what runs inside the isolation, never the isolation
 * itself — that is why profiles are not settings and do not close the dispatch gate; an image is
 * isolation, which is why it is qualified on its own.
 * When the profile's code carries a lockfile, its dependencies come from the trusted builder
 * (lib/dependencies/ensure-agent-dependency-bundle.ts) and go into the guest beside the code.
 */
import { z } from "zod";
import { readAgentCode } from "../agents/store-agent-code";
import { GUEST_AGENT_CODE_ARCHIVE, GUEST_AGENT_DEPENDENCIES_ARCHIVE } from "../contract/guest-layout";
import { loadDeliverableBundle, type TDeliverableBundle } from "../dependencies/deliver-dependency-bundle";
import { ensureAgentDependencyBundle } from "../dependencies/ensure-agent-dependency-bundle";
import type { TDependencyDeps } from "../dependencies/run-dependency-setup";
import { ZGuestImageSchema, type TGuestImage } from "../contract/guest-image";
import type { Db } from "../db/client";
import type { Task } from "../db/generated/client";
import type { TEnv } from "../env";
import { AppError } from "../errors";
import { assertProfileImageQualified } from "../probes/image-qualification";
import { readProbeRunGuestImage } from "../probes/probe-run-image";
import { readSetting } from "../settings/operator-settings";
import type { Substrate } from "../substrate/substrate";

export type TTaskAgent = {
  command: string[];
  image: TGuestImage;
  environment: Record<string, string>;
  code: { digest: string; bytes: Buffer } | null;
  profile: { name: string; owner: string; version: number } | null;
};

const ZCommandSchema = z.array(z.string().min(1).max(4000)).min(1).max(64);

export async function resolveTaskAgent(deps: { db: Db; env: TEnv }, task: Task): Promise<TTaskAgent> {
  const { db, env } = deps;
  // A qualification probe's task runs the probe's own fixed command (lib/probes/probe-tasks.ts), on its run's recorded image.
  if (task.agentCommand) {
    const image = task.probeRunId
      ? await readProbeRunGuestImage(db, task.probeRunId)
      : await readSetting({ db }, { key: "guest.image" });
    return { command: ZCommandSchema.parse(task.agentCommand), image, environment: {}, code: null, profile: null };
  }
  if (!task.agentProfileVersionId)
    return {
      command: (await readSetting({ db }, { key: "guest.agent" })).command,
      image: await readSetting({ db }, { key: "guest.image" }),
      environment: {},
      code: null,
      profile: null,
    };
  const version = await db.agentProfileVersion.findUniqueOrThrow({
    where: { id: task.agentProfileVersionId },
    include: { profile: true },
  });
  let image: TGuestImage;
  if (version.image === null) image = await readSetting({ db }, { key: "guest.image" });
  else {
    const own = ZGuestImageSchema.safeParse(version.image);
    // Fail closed: an image that no longer parses is not one any probe run qualified.
    if (!own.success)
      throw new AppError(
        "AGENT_IMAGE_NOT_QUALIFIED",
        `Agent profile ${version.profile.name} v${version.version} has an invalid guest image.`,
      );
    await assertProfileImageQualified(
      { db, env },
      { image: own.data, profile: version.profile.name, version: version.version },
    );
    image = own.data;
  }
  return {
    command: ZCommandSchema.parse(version.command),
    image,
    environment: z.record(z.string(), z.string()).parse(version.environment),
    code: version.codeDigest
      ? { digest: version.codeDigest, bytes: await readAgentCode({ dataDir: env.dataDir }, version.codeDigest) }
      : null,
    profile: { name: version.profile.name, owner: version.profile.owner, version: version.version },
  };
}

/**
 * The bundle of the agent code's lockfile, built or reused (null: no code, or no lockfile in it).
 * Throws AGENT_DEPENDENCIES_FAILED when it cannot be had: the task blocks before any guest of its
 * own is made, and its agent never runs without what it locked.
 */
export async function ensureTaskAgentDependencies(
  deps: TDependencyDeps,
  input: { taskId: string; agent: TTaskAgent },
): Promise<TDeliverableBundle | null> {
  const { agent } = input;
  if (!agent.code) return null;
  const bundle = await ensureAgentDependencyBundle(deps, {
    code: agent.code,
    reason: `first task needing it (task ${input.taskId}, agent ${agent.profile?.name ?? "?"} v${agent.profile?.version ?? "?"})`,
    machineSlot: "task",
  });
  return bundle ? loadDeliverableBundle(deps, bundle) : null;
}

/** task.json's agent fields beyond command and deadline (none for the default agent). */
export function taskRequestAgentFields(agent: TTaskAgent, dependencies: TDeliverableBundle | null = null) {
  return {
    ...(agent.profile ? { environment: agent.environment } : {}),
    ...(agent.code ? { codeArchive: GUEST_AGENT_CODE_ARCHIVE, codeDigest: agent.code.digest } : {}),
    ...(dependencies
      ? {
          dependencies: {
            archive: GUEST_AGENT_DEPENDENCIES_ARCHIVE,
            digest: dependencies.bundle.artifactDigest,
            outputDir: dependencies.outputDir,
          },
        }
      : {}),
  };
}

/**
 * What the agent ran as, for the teacher's insights (grouped by its digest): command and image as
 * before — unchanged for a task with no profile — plus, with a profile, its name, version, code
 * digest and environment (never secrets: refused when the profile was written), and the digest of
 * the dependency bundle its lockfile got, when it has one (issue 26).
 */
export function agentConfigOf(agent: TTaskAgent, dependencies: TDeliverableBundle | null = null) {
  return {
    command: agent.command,
    image: agent.image,
    ...(agent.profile
      ? {
          profile: {
            ...agent.profile,
            codeDigest: agent.code?.digest ?? null,
            environment: agent.environment,
            ...(dependencies ? { dependenciesDigest: dependencies.bundle.artifactDigest } : {}),
          },
        }
      : {}),
  };
}

/** Uploads the profile's code next to task.json; the runner extracts it. Bounded by the task's upload limit. */
export async function uploadAgentCode(
  substrate: Substrate,
  providerId: string,
  agent: TTaskAgent,
  maxUploadBytes: number,
): Promise<void> {
  if (!agent.code) return;
  if (agent.code.bytes.length > maxUploadBytes)
    throw new AppError(
      "VALIDATION_FAILED",
      `The agent's code is ${agent.code.bytes.length} bytes, over the ${maxUploadBytes}-byte upload limit.`,
    );
  await substrate.upload(providerId, GUEST_AGENT_CODE_ARCHIVE, agent.code.bytes);
}

/** Uploads the agent code's dependency bundle next to its code; the runner extracts it into the agent's directory. */
export async function uploadAgentDependencies(
  substrate: Substrate,
  providerId: string,
  dependencies: TDeliverableBundle | null,
): Promise<void> {
  if (dependencies) await substrate.upload(providerId, GUEST_AGENT_DEPENDENCIES_ARCHIVE, dependencies.bytes);
}
