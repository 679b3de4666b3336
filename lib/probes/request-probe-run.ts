/**
 * `requestProbeRun(deps, { probes })`: records a queued run bound to the configuration digest in
 * force now. A worker is told at once and picks it up (a pg-boss job: a web restart does not stop
 * it); the CLI (`isRunByCaller`) runs it in its own process with the same code.
 */
import type { Db } from "../db/client";
import type { TEnv } from "../env";
import { readSubstrateConfig } from "../settings/substrate-config";
import type { TProbeId } from "./probe-catalog";
import { createProbeRun } from "./probe-run.repo";
import { substrateEndpointPart } from "./substrate-endpoint-part";

export async function requestProbeRun(
  deps: { db: Db; env: TEnv },
  input: { probes: TProbeId[]; actorId: string | null; isRunByCaller?: boolean },
) {
  const endpoint = await substrateEndpointPart(deps.env);
  const snapshot = await readSubstrateConfig(deps.db, endpoint);
  return createProbeRun(deps.db, { ...input, substrate: endpoint.substrate.kind, snapshot });
}
