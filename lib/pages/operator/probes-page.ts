/**
 * The operator's probes page (`/operator/probes`): the dispatch gate (re-proved at this read), the
 * newest 20 qualification runs with the one asked for (else the newest) selected, whether the page
 * refreshes itself, and its setting panels.
 */
import { can } from "../../auth/permissions";
import type { Actor } from "../../contract/actor";
import { listProbeRuns } from "../../probes/probe-run.repo";
import { readDispatchGate } from "../../probes/read-dispatch-gate";
import { assertMayRead, type TPageDeps } from "../page-deps";
import { readSettingPanels } from "../setting-panels";

export async function readProbesPage(deps: TPageDeps, input: { actor: Actor; run?: string | undefined }) {
  assertMayRead(input.actor, "probe.run");
  const { db } = deps;
  const [gate, runs, settingPanels] = await Promise.all([
    readDispatchGate(deps),
    listProbeRuns({ db }, { take: 20 }),
    readSettingPanels(deps, { page: "/operator/probes" }),
  ]);
  return {
    gate,
    runs,
    selected: runs.find((r) => r.id === input.run) ?? runs[0],
    isActive: runs.some((r) => r.state === "queued" || r.state === "running"),
    canToggle: can(input.actor, "dispatch.toggle"),
    settingPanels,
  };
}
