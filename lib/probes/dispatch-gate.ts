/**
 * The dispatch gate's rule, pure. Dispatch may open only while the latest completed probe run for
 * the *current* configuration digest passed every probe P0–P7; a run on the local substrate
 * (bubblewrap, not a VM) opens development mode only; production needs a passing run on a
 * substrate that is not the local one. Everything else is a refusal naming what is missing.
 */
import type { TDispatchMode, TDispatchSetting } from "../contract/dispatch-setting";
import { PROBE_IDS } from "./probe-catalog";

export type TGateRun = {
  id: string;
  state: "queued" | "running" | "passed" | "failed";
  substrate: string;
  configDigest: string;
  results: { probe: string; status: string }[];
  finishedAt: Date | null;
};

export type TGateDecision = { kind: "open"; mode: Exclude<TDispatchMode, "off">; runId: string } | { kind: "refused"; reason: string };

export function decideDispatchOpen(input: {
  requested: Exclude<TDispatchMode, "off">;
  currentDigest: string;
  latestRun: TGateRun | null;
}): TGateDecision {
  const { latestRun: run, currentDigest } = input;
  const short = currentDigest.slice(0, 12);
  if (!run)
    return {
      kind: "refused",
      reason: `No completed probe run for the current substrate configuration (digest ${short}…). Run all probes first.`,
    };
  if (run.configDigest !== currentDigest)
    return {
      kind: "refused",
      reason: `The latest completed probe run ${run.id} was for another configuration digest; run the probes for ${short}….`,
    };
  if (run.state !== "passed") {
    const missing = PROBE_IDS.filter((id) => run.results.find((r) => r.probe === id)?.status !== "passed");
    return {
      kind: "refused",
      reason: `The latest completed probe run ${run.id} for digest ${short}… did not pass: ${missing.join(", ")} missing or not passed.`,
    };
  }
  const missing = PROBE_IDS.filter((id) => run.results.find((r) => r.probe === id)?.status !== "passed");
  if (missing.length > 0)
    return {
      kind: "refused",
      reason: `The latest completed probe run ${run.id} did not run every probe: ${missing.join(", ")} not passed.`,
    };
  if (input.requested === "production" && run.substrate === "local") {
    return {
      kind: "refused",
      reason:
        "The local substrate is not a VM: its passing run opens development dispatch only (dispatch on --development). Production needs a passing run on a hosted substrate.",
    };
  }
  return { kind: "open", mode: input.requested, runId: run.id };
}

/** Whether a stored gate still holds for the configuration in force now (re-checked before every provisioning). */
export function recheckOpenGate(
  gate: TDispatchSetting,
  input: { currentDigest: string; openingRun: TGateRun | null },
): { kind: "open" } | { kind: "closed"; reason: string | null; mustRecord: boolean } {
  if (gate.mode === "off") return { kind: "closed", reason: gate.closedReason, mustRecord: false };
  if (gate.configDigest !== input.currentDigest) {
    return {
      kind: "closed",
      reason: `The substrate configuration changed (digest ${input.currentDigest.slice(0, 12)}…, dispatch was qualified for ${gate.configDigest?.slice(0, 12)}…). Run the probes again.`,
      mustRecord: true,
    };
  }
  const run = input.openingRun;
  if (
    !run ||
    run.state !== "passed" ||
    run.configDigest !== gate.configDigest ||
    (gate.mode === "production" && run.substrate === "local")
  ) {
    return {
      kind: "closed",
      reason: "The probe run that opened dispatch no longer proves it (missing, not passed, or of another configuration).",
      mustRecord: true,
    };
  }
  return { kind: "open" };
}
