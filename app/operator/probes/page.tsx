import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { ActionForm, SubmitButton } from "@/components/action-form";
import { AutoRefresh } from "@/components/auto-refresh";
import { DataTable } from "@/components/data-table";
import { DispatchGatePanel } from "@/components/dispatch-gate-panel";
import { EmptyState } from "@/components/empty-state";
import { StateBadge } from "@/components/state-badge";
import { getPageDeps } from "@/app/_server/page-data";
import { readProbesPage } from "@/lib/pages/operator/probes-page";
import { formatDateTime, formatDuration } from "@/lib/format/format";
import { SettingPanels } from "../_settings/setting-panel";
import { requestProbeRunAction, setDispatchAction } from "./actions";

export const dynamic = "force-dynamic";

export default async function ProbesPage({ searchParams }: { searchParams: Promise<{ run?: string }> }) {
  const actor = await requirePagePermission("probe.run", "/operator/probes");
  const { gate, runs, probes, selected, isActive, canToggle, settingPanels } = await readProbesPage(
    await getPageDeps(),
    { actor, run: (await searchParams).run },
  );
  return (
    <section className="space-y-6">
      <div className="flex items-center justify-between">
        <h1>Qualification probes</h1>
        <AutoRefresh isActive={isActive} intervalMs={1500} />
      </div>
      <p className="text-sm text-slate-700">
        Each probe runs real guests on the configured substrate and records what it observed. Dispatch can open only
        while the latest completed run for the current configuration digest passed P0–P8 (P8: the dependency builder
        reaches only the registry broker); the local substrate (not a VM) opens development dispatch only. A run&apos;s
        probes run side by side; P7 starts once they have finished, because it scans the evidence of all the others. A
        full run on the local substrate takes about 10 seconds (P4 waits out an 8-second task deadline).
      </p>
      <DispatchGatePanel gate={gate} action={setDispatchAction} canToggle={canToggle} />
      <div className="space-y-2 rounded border border-slate-200 bg-white p-4" data-testid="probe-controls">
        <h2>Run</h2>
        {/* one form, one button per selection: the result line sits under the whole row */}
        <ActionForm action={requestProbeRunAction} testId="run-all-probes" className="space-y-2">
          <div className="flex flex-wrap items-start gap-2">
            <SubmitButton name="probes" value="all">
              Run all probes
            </SubmitButton>
            {probes.map(({ id, title }) => (
              <SubmitButton key={id} name="probes" value={id} title={title} data-testid={`run-${id}`}>
                Run {id}
              </SubmitButton>
            ))}
          </div>
        </ActionForm>
      </div>
      {selected ? (
        <div
          className="space-y-2 rounded border border-slate-200 bg-white p-4"
          data-testid="probe-run"
          data-run-id={selected.id}
          data-state={selected.state}
        >
          <h2>
            Run <code>{selected.id}</code> <StateBadge state={selected.state} />
          </h2>
          <p className="text-xs text-slate-600">
            {selected.substrate === "local" ? "local substrate (not a VM)" : "hosted substrate"} · configuration digest{" "}
            <code>{selected.configDigest}</code>
            {selected.configDigest === gate.currentDigest ? " (current)" : " (not the current configuration)"}
          </p>
          {selected.reason && <p className="text-sm text-red-800">{selected.reason}</p>}
          <DataTable testId="probe-results" headers={["Probe", "Status", "Duration", "Detail"]}>
            {selected.results.map((result) => (
              <tr
                key={result.probe}
                className="border-t border-slate-200 align-top"
                data-testid={`probe-${result.probe}`}
                data-status={result.status}
              >
                <td className="p-2">
                  {result.probe} {result.title}
                </td>
                <td className="p-2">
                  <StateBadge state={result.status} />
                </td>
                <td className="p-2">{formatDuration(result.durationMs)}</td>
                <td className="p-2">
                  {result.providerError && (
                    <p className="text-xs text-red-800">Provider said: {result.providerError}</p>
                  )}
                  {result.detail !== null && (
                    <details>
                      <summary className="cursor-pointer text-xs">detail</summary>
                      <pre className="max-h-64 overflow-auto whitespace-pre-wrap text-xs">
                        {JSON.stringify(result.detail, null, 2)}
                      </pre>
                    </details>
                  )}
                </td>
              </tr>
            ))}
          </DataTable>
          {selected.evidenceDigest && (
            <p className="text-sm" data-testid="probe-evidence">
              Evidence sha256 <code>{selected.evidenceDigest}</code> —{" "}
              <a href={`/operator/probes/evidence/${selected.evidenceDigest}`} data-testid="evidence-download">
                download
              </a>
            </p>
          )}
        </div>
      ) : (
        <EmptyState title="No probe runs yet">Run all probes to qualify the configured substrate.</EmptyState>
      )}
      {runs.length > 0 && (
        <div className="space-y-2">
          <h2>History</h2>
          <DataTable testId="probe-history" headers={["Run", "State", "Substrate", "Digest", "Probes", "Started"]}>
            {runs.map((run) => (
              <tr key={run.id} className="border-t border-slate-200">
                <td className="p-2">
                  <Link href={`/operator/probes?run=${run.id}`}>{run.id.slice(0, 8)}</Link>
                  {gate.openedByRunId === run.id && gate.isOpen && (
                    <strong className="ml-1 text-green-800">opened dispatch</strong>
                  )}
                </td>
                <td className="p-2">
                  <StateBadge state={run.state} />
                </td>
                <td className="p-2">{run.substrate}</td>
                <td className="p-2">
                  <code>{run.configDigest.slice(0, 12)}…</code>
                </td>
                <td className="p-2 text-xs">{run.results.map((r) => `${r.probe}:${r.status}`).join(" ")}</td>
                <td className="p-2">{formatDateTime(run.createdAt, { precision: "second" })}</td>
              </tr>
            ))}
          </DataTable>
        </div>
      )}
      <SettingPanels panels={settingPanels} />
    </section>
  );
}
