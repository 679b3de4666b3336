/**
 * What a lifecycle step needs from the world: the database, the substrate, where staging files
 * go, and the guest-side programs the operator ships. Built once per worker.
 */
import path from "node:path";
import type { Db } from "../db/client";
import type { TEnv } from "../env";
import type { Substrate } from "../substrate/substrate";
import type { TRelayTransport } from "../relay/transports/transport";
import { PROJECT_ROOT } from "../project-root";

export const GUEST_PROGRAMS_DIR = path.join(PROJECT_ROOT, "guest");
/**
 * The in-guest model endpoint's modules (part of GUEST_PROGRAMS, closed under their imports):
 * qualification probe P2 uploads them into its guests beside a task.json relay section and starts
 * the endpoint with the runner's own function (lib/probes/p2-model-endpoint.ts).
 */
export const MODEL_ENDPOINT_PROGRAMS = [
  "model-endpoint.mjs",
  "model-endpoint-common.mjs",
  "model-endpoint-openai.mjs",
  "model-endpoint-anthropic.mjs",
  "model-endpoint-http.mjs",
  "relay-client.mjs",
  "relay-protocol.mjs",
  "relay-channel-mailbox.mjs",
  "relay-channel-http.mjs",
] as const;

/**
 * Operator-owned programs uploaded into every student guest, side by side, with every guest module
 * they import (the runner and the agents import spawn-with-timeout.mjs): a module missing
 * here is an import failure inside the guest (guest/guest-program-imports.test.ts).
 */
export const GUEST_PROGRAMS = [
  "runner.mjs",
  "spawn-with-timeout.mjs",
  ...MODEL_ENDPOINT_PROGRAMS,
  "agent-tools.mjs",
  "agent-run.mjs",
  "openai-agent.mjs",
  "anthropic-agent.mjs",
  "student-agent.mjs",
] as const;

/** The qualification probe program and the modules it imports, uploaded side by side into every probe guest (lib/probes/run-guest-probe.ts). */
export const PROBE_PROGRAMS = ["probe.mjs", "probe-io.mjs", "probe-model-endpoint.mjs"] as const;

export type TaskRunContext = {
  db: Db;
  env: TEnv;
  substrate: Substrate;
  /** overrides the operator-configured relay transport (tests, benchmarks) */
  relayTransport?: TRelayTransport;
  /** how often the running step polls the guest */
  pollIntervalMs: number;
  readyTimeoutMs: number;
};

export function stagingDir(env: TEnv, taskId: string): string {
  return path.join(env.dataDir, "staging", taskId);
}
