/**
 * `requestProbeRun(deps, { probes })`: records a queued run bound to the configuration digest in
 * force now. A worker is told at once and picks it up (a pg-boss job: a web restart does not stop
 * it); the CLI (`isRunByCaller`) runs it in its own process with the same code.
 *
 * With `guestImage` (an agent profile's own image, issue 26) the run is bound to the configuration
 * in force with that image in place of guest.image: its config and digest are that substituted
 * configuration, its probes create their guests from that image, and a passing run qualifies the
 * image for that configuration only (lib/probes/image-qualification.ts).
 */
import { actorIdOf, type Actor } from "../contract/actor";
import type { TGuestImage } from "../contract/guest-image";
import type { Db } from "../db/client";
import type { TEnv } from "../env";
import { readSubstrateConfig, withGuestImage } from "../settings/substrate-config";
import type { TProbeId } from "./probe-registry";
import { createProbeRun } from "./probe-run.repo";
import { substrateEndpointPart } from "./substrate-endpoint-part";

export async function requestProbeRun(
  deps: { db: Db; env: TEnv },
  input: {
    probes: TProbeId[];
    actor: Actor | null;
    isRunByCaller?: boolean;
    guestImageOverride?: { image: TGuestImage; profile: string | null };
  },
) {
  const endpoint = await substrateEndpointPart(deps.env);
  const inForce = await readSubstrateConfig(deps.db, endpoint);
  const snapshot = input.guestImageOverride ? withGuestImage(inForce.config, input.guestImageOverride.image) : inForce;
  const { actor, ...fields } = input;
  return createProbeRun(deps.db, {
    ...fields,
    actorId: actorIdOf(actor),
    substrate: endpoint.substrate.kind,
    snapshot,
  });
}
