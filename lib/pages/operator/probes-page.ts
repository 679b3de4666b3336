/**
 * The operator's probes page (`/operator/probes`): the dispatch gate (re-proved at this read), the
 * newest 20 qualification runs with the one asked for (else the newest) selected, whether the page
 * refreshes itself, the probes (id and title, in run order: the run buttons, and each run's results
 * in that order), and its setting panels.
 */
import { can } from "../../auth/permissions";
import type { Actor } from "../../contract/actor";
import { listProbeRuns } from "../../probes/probe-run.repo";
import { probeSummaries } from "../../probes/probe-registry";
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
  const probes = probeSummaries();
  const rank = (probe: string) => {
    const index = probes.findIndex((p) => p.id === probe);
    return index === -1 ? probes.length : index;
  };
  const selected = runs.find((r) => r.id === input.run) ?? runs[0];
  return {
    gate,
    runs,
    probes,
    /** The selected run with its results in run order, each with its probe's title. */
    selected: selected && {
      ...selected,
      results: [...selected.results]
        .sort((a, b) => rank(a.probe) - rank(b.probe))
        .map((result) => ({ ...result, title: probes.find((p) => p.id === result.probe)?.title ?? "" })),
    },
    isActive: runs.some((r) => r.state === "queued" || r.state === "running"),
    canToggle: can(input.actor, "dispatch.toggle"),
    settingPanels,
  };
}
