/**
 * The dispatch gate's rule, pure. Dispatch may open only while the latest completed probe run for
 * the *current* configuration digest passed every probe P0–P7; a run on the local substrate
 * (bubblewrap, not a VM) opens development mode only; production needs a passing run on a
 * substrate that is not the local one, whose P2 probed external targets (the private range, the
 * metadata address, the internet). An open gate is re-proved against the *latest* completed run
 * for its digest, not the one that opened it: newer evidence that fails closes it (issue 27).
 * And a task is held to the limits that run qualified: a snapshot taken under another
 * configuration (queued while the gate was closed) may be weaker. Everything else is a refusal
 * naming what is missing.
 */
import type { TDispatchMode, TDispatchSetting, TSubstrateConfig } from "../contract/dispatch-setting";
import { ZTaskLimitsSchema, type TTaskLimits } from "../contract/limits";
import { ZLimitOverrideMaximaSchema } from "../settings/setting-schemas";
import { changedDigestInputs } from "../settings/substrate-config";
import { PROBE_IDS } from "./probe-registry";
export type TGateRun = {
  id: string;
  state: "queued" | "running" | "passed" | "failed";
  substrate: string;
  configDigest: string;
  results: { probe: string; status: string }[];
  finishedAt: Date | null;
};

export type TGateDecision =
  | { kind: "open"; mode: Exclude<TDispatchMode, "off">; runId: string }
  | { kind: "refused"; code: "DISPATCH_NOT_QUALIFIED" | "DISPATCH_EXTERNAL_TARGETS_MISSING"; reason: string };

/** How many external targets the configuration's P2 probes (probe.externalTargets). */
export function externalTargetCountOf(config: Pick<TSubstrateConfig, "probeExternalTargets"> | null): number {
  return config?.probeExternalTargets?.length ?? 0;
}

export function decideDispatchOpen(input: {
  requested: Exclude<TDispatchMode, "off">;
  currentDigest: string;
  latestRun: TGateRun | null;
  /** the external targets of the configuration with this digest (so also the ones its runs probed) */
  externalTargetCount: number;
}): TGateDecision {
  const { latestRun: run, currentDigest } = input;
  const refused = (reason: string): TGateDecision => ({ kind: "refused", code: "DISPATCH_NOT_QUALIFIED", reason });
  const short = currentDigest.slice(0, 12);
  if (!run)
    return refused(
      `No completed probe run for the current substrate configuration (digest ${short}…). Run all probes first.`,
    );
  if (run.configDigest !== currentDigest)
    return refused(
      `The latest completed probe run ${run.id} was for another configuration digest; run the probes for ${short}….`,
    );
  if (run.state !== "passed") {
    const missing = PROBE_IDS.filter((id) => run.results.find((r) => r.probe === id)?.status !== "passed");
    return refused(
      `The latest completed probe run ${run.id} for digest ${short}… did not pass: ${missing.join(", ")} missing or not passed.`,
    );
  }
  const missing = PROBE_IDS.filter((id) => run.results.find((r) => r.probe === id)?.status !== "passed");
  if (missing.length > 0)
    return refused(
      `The latest completed probe run ${run.id} did not run every probe: ${missing.join(", ")} not passed.`,
    );
  if (input.requested === "production" && run.substrate === "local") {
    return refused(
      "The local substrate is not a VM: its passing run opens development dispatch only (dispatch on --development). Production needs a passing run on a hosted substrate.",
    );
  }
  // Loopback-only egress evidence says nothing about the provider's network: production on a
  // hosted substrate needs P2 to have tried the private range, the metadata address and the internet.
  if (input.requested === "production" && input.externalTargetCount === 0) {
    return {
      kind: "refused",
      code: "DISPATCH_EXTERNAL_TARGETS_MISSING",
      reason:
        "Production dispatch on a hosted substrate needs P2 to have probed external targets (a private-range address, the metadata address, a public address, a resolver): set probe.externalTargets, then run the probes again.",
    };
  }
  return { kind: "open", mode: input.requested, runId: run.id };
}

/**
 * Whether a stored gate still holds for the configuration in force now (re-checked before every
 * provisioning): the digest is unchanged and the latest completed run for it — whichever run that
 * is now — still opens the gate's mode. A later failing run closes it even though the opening run
 * passed: the newest evidence wins.
 */
export function recheckOpenGate(
  gate: TDispatchSetting,
  input: { currentDigest: string; currentConfig: TSubstrateConfig; latestRun: TGateRun | null },
): { kind: "open" } | { kind: "closed"; reason: string | null; mustRecord: boolean; changedSettings?: string[] } {
  if (gate.mode === "off") return { kind: "closed", reason: gate.closedReason, mustRecord: false };
  if (gate.configDigest !== input.currentDigest) {
    // The gate keeps the configuration it was opened for, so it can name what changed since.
    const changed = gate.config
      ? changedDigestInputs(gate.config, input.currentConfig)
      : { settings: [], isEnvironmentChanged: false, isLimitsModeChanged: false };
    const causes = [
      ...(changed.settings.length > 0
        ? [
            `${changed.settings.length === 1 ? "Setting" : "Settings"} ${changed.settings.map((key) => `"${key}"`).join(", ")} changed`,
          ]
        : []),
      ...(changed.isEnvironmentChanged ? ["the substrate endpoint changed"] : []),
      ...(changed.isLimitsModeChanged ? [limitsModeCause(input.currentConfig)] : []),
    ];
    const what = causes.length > 0 ? causes.join(" and ") : "The substrate configuration changed";
    return {
      kind: "closed",
      reason: `${what.charAt(0).toUpperCase()}${what.slice(1)}: the substrate configuration digest is now ${input.currentDigest.slice(0, 12)}… (dispatch was qualified for ${gate.configDigest?.slice(0, 12)}…). Run the probes again.`,
      mustRecord: true,
      changedSettings: changed.settings,
    };
  }
  const decision = decideDispatchOpen({
    requested: gate.mode,
    currentDigest: input.currentDigest,
    latestRun: input.latestRun,
    externalTargetCount: externalTargetCountOf(gate.config),
  });
  if (decision.kind === "open") return { kind: "open" };
  return { kind: "closed", reason: `Dispatch no longer qualified: ${decision.reason}`, mustRecord: true };
}

/** Every numeric limit is a ceiling: a task whose value is higher than the qualified one is weaker. */
export const TASK_LIMIT_CEILINGS = [
  "wallClockSeconds",
  "cpus",
  "memoryMb",
  "diskGb",
  "maxProcesses",
  "maxExecOutputBytes",
  "maxArchiveBytes",
  "maxResultBytes",
  "maxReportBytes",
  "maxUploadBytes",
] as const satisfies readonly (keyof TTaskLimits)[];
export const RELAY_LIMIT_CEILINGS = [
  "maxRequests",
  "maxBytes",
  "maxRequestBytes",
  "maxResponseBytes",
  "maxTokens",
] as const satisfies readonly (keyof TTaskLimits["relay"])[];
/** Network policy, strongest first: the mailbox channel blocks the network; http opens one egress. */
const RELAY_CHANNEL_STRENGTH: Record<TTaskLimits["relayChannel"], number> = { mailbox: 0, http: 1 };

export type TUnqualifiedLimit = { field: string; task: number | string; qualified: number | string | null };

/**
 * The fields where a task's limits snapshot is weaker than the qualified configuration: more of a
 * resource than the qualified limits allow (for the per-task overridable ones, than the qualified
 * override maxima allow, when higher), or an open network where it was blocked. Unreadable
 * qualified limits qualify nothing (fail closed); unreadable maxima allow no override.
 */
export function findUnqualifiedLimits(
  task: TTaskLimits,
  input: { qualified: unknown; overrideMaxima: unknown },
): TUnqualifiedLimit[] {
  const qualified = ZTaskLimitsSchema.safeParse(input.qualified);
  if (!qualified.success) return [{ field: "limits", task: "snapshot", qualified: null }];
  const maxima = ZLimitOverrideMaximaSchema.safeParse(input.overrideMaxima);
  const q = qualified.data;
  const found: TUnqualifiedLimit[] = [];
  for (const field of TASK_LIMIT_CEILINGS) {
    const allowance = maxima.success && field in maxima.data ? maxima.data[field as keyof typeof maxima.data] : 0;
    const ceiling = Math.max(q[field], allowance);
    if (task[field] > ceiling) found.push({ field, task: task[field], qualified: ceiling });
  }
  for (const field of RELAY_LIMIT_CEILINGS) {
    if (task.relay[field] > q.relay[field])
      found.push({ field: `relay.${field}`, task: task.relay[field], qualified: q.relay[field] });
  }
  if (RELAY_CHANNEL_STRENGTH[task.relayChannel] > RELAY_CHANNEL_STRENGTH[q.relayChannel])
    found.push({ field: "relayChannel", task: task.relayChannel, qualified: q.relayChannel });
  return found;
}

/** How the substrate enforces limits now, in words: a restart without cgroups is a different substrate. */
function limitsModeCause(now: TSubstrateConfig): string {
  const mode = now.substrate.limitsMode;
  if (!mode) return "the substrate's limits mode could not be read";
  return `the substrate's limits mode changed (now pids ${mode.pids}, memory ${mode.memory}, cpu ${mode.cpu}, disk ${mode.disk})`;
}
