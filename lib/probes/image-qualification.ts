/**
 * Qualification per guest image (issue 26): an agent profile may name a guest image of its own,
 * and no student code runs on a substrate until the probes passed on that exact configuration. So
 * a profile's image is qualified by a probe run for "the configuration in force with guestImage =
 * the profile's image" (lib/settings/substrate-config.ts withGuestImage), judged by the dispatch
 * gate's own rule (decideDispatchOpen) against the *latest* completed run for that digest: a later
 * failing run un-qualifies it (newest evidence wins), and any change of the configuration in force
 * changes the digest, so the image needs a new run — exactly as the gate does for guest.image.
 */
import { getAgentProfile } from "../agents/agent-profiles.repo";
import type { Actor } from "../contract/actor";
import { ZGuestImageSchema, type TGuestImage } from "../contract/guest-image";
import type { Db } from "../db/client";
import type { TEnv } from "../env";
import { AppError } from "../errors";
import { readSubstrateConfig, withGuestImage } from "../settings/substrate-config";
import { decideDispatchOpen, externalTargetCountOf } from "./dispatch-gate";
import type { TProbeId } from "./probe-registry";
import { latestCompletedRunFor } from "./probe-run.repo";
import { readDispatchGate } from "./read-dispatch-gate";
import { requestProbeRun } from "./request-probe-run";
import { substrateEndpointPart } from "./substrate-endpoint-part";

export type TImageQualification =
  | { kind: "qualified"; digest: string; runId: string }
  /** no completed probe run for this image under the configuration in force */
  | { kind: "not_qualified"; digest: string; reason: string }
  /** the latest completed run for it did not pass every probe (or cannot open this mode) */
  | { kind: "failed"; digest: string; runId: string; reason: string };

export async function readImageQualification(
  deps: { db: Db; env: TEnv },
  input: { image: TGuestImage; mode: "development" | "production" },
): Promise<TImageQualification> {
  const inForce = await readSubstrateConfig(deps.db, await substrateEndpointPart(deps.env));
  const snapshot = withGuestImage(inForce.config, input.image);
  const latestRun = await latestCompletedRunFor(deps.db, snapshot.digest);
  const decision = decideDispatchOpen({
    requested: input.mode,
    currentDigest: snapshot.digest,
    latestRun,
    externalTargetCount: externalTargetCountOf(snapshot.config),
  });
  if (decision.kind === "open") return { kind: "qualified", digest: snapshot.digest, runId: decision.runId };
  if (!latestRun) return { kind: "not_qualified", digest: snapshot.digest, reason: decision.reason };
  return { kind: "failed", digest: snapshot.digest, runId: latestRun.id, reason: decision.reason };
}

/**
 * At provisioning: a profile's own image runs only while dispatch is open and the image is
 * qualified for the gate's mode under the configuration in force. Anything else is a refusal
 * (AGENT_IMAGE_NOT_QUALIFIED) that says how to qualify it; returns the qualifying run's id.
 */
export async function assertProfileImageQualified(
  deps: { db: Db; env: TEnv },
  input: { image: TGuestImage; profile: string; version: number },
): Promise<string> {
  const what = `Agent profile ${input.profile} v${input.version} names a guest image of its own (${input.image.type} ${input.image.reference})`;
  const howTo = `Qualify the image: \`schoolcore probe run --image-of-profile ${input.profile}\` or "Run the probes for this image" on /operator/agents/${input.profile}.`;
  const gate = await readDispatchGate(deps);
  // Fail closed: without an open gate there is no configuration in force to qualify the image under.
  if (!gate.isOpen || gate.mode === "off")
    throw new AppError("AGENT_IMAGE_NOT_QUALIFIED", `${what}, and dispatch is not open. ${howTo}`);
  const qualification = await readImageQualification(deps, { image: input.image, mode: gate.mode });
  if (qualification.kind === "qualified") return qualification.runId;
  throw new AppError(
    "AGENT_IMAGE_NOT_QUALIFIED",
    `${what} that is not qualified under the configuration in force: ${qualification.reason} ${howTo}`,
    { configDigest: qualification.digest, ...(qualification.kind === "failed" ? { runId: qualification.runId } : {}) },
  );
}

/** The guest image of a profile's current version (what a task created now runs), or null: it runs guest.image. */
export async function readProfileImage(deps: { db: Db }, input: { profile: string }) {
  const profile = await getAgentProfile(deps, { name: input.profile });
  const current = profile.versions.find((v) => v.version === profile.currentVersion);
  if (!current) throw new AppError("NOT_FOUND", `Agent profile ${profile.name} has no current version.`);
  const parsed = current.image === null ? null : ZGuestImageSchema.safeParse(current.image);
  if (parsed && !parsed.success)
    throw new AppError(
      "CONFIG_INVALID",
      `Agent profile ${profile.name} v${current.version} has an invalid guest image.`,
    );
  return { name: profile.name, version: current.version, image: parsed ? parsed.data : null };
}

/**
 * What the operator's profile page shows: whether the profile's own image is qualified now for the
 * mode dispatch is open in (development when it is closed), by which run, or why not.
 */
export async function readProfileImageQualification(deps: { db: Db; env: TEnv }, input: { profile: string }) {
  const profile = await readProfileImage(deps, input);
  if (!profile.image) return { ...profile, mode: null, isDispatchOpen: null, qualification: null };
  const gate = await readDispatchGate(deps);
  const mode = gate.isOpen && gate.mode !== "off" ? gate.mode : "development";
  return {
    ...profile,
    mode,
    isDispatchOpen: gate.isOpen,
    qualification: await readImageQualification(deps, { image: profile.image, mode }),
  };
}

/**
 * "Run the probes for this image": a probe run (audited as `probe.run`, naming the profile and
 * image) for the configuration in force with the profile's current image as the guest image.
 * Refused for a profile with no image of its own: it runs guest.image, which the ordinary run qualifies.
 */
export async function requestProfileImageProbeRun(
  deps: { db: Db; env: TEnv },
  input: { profile: string; probes: TProbeId[]; actor: Actor | null; isRunByCaller?: boolean },
) {
  const profile = await readProfileImage(deps, input);
  if (!profile.image)
    throw new AppError(
      "VALIDATION_FAILED",
      `Agent profile ${profile.name} has no guest image of its own: it runs guest.image, which an ordinary probe run qualifies.`,
    );
  return requestProbeRun(deps, {
    probes: input.probes,
    actor: input.actor,
    isRunByCaller: input.isRunByCaller,
    guestImageOverride: { image: profile.image, profile: profile.name },
  });
}
