import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { EmptyState } from "@/components/empty-state";
import { HealthPanel } from "@/components/health-panel";
import { StateBadge } from "@/components/state-badge";
import { getRunContext } from "@/app/_server/run-context";
import { formatMicros } from "@/lib/spend/spend-guard";
import { formatDateTime, formatTime } from "@/lib/format/format";
import { DataTable } from "@/components/data-table";
import { DispatchLabel } from "@/components/dispatch-gate-panel";
import { readDashboardPage } from "@/lib/pages/operator/dashboard-page";
import { AutoRefresh } from "@/components/auto-refresh";
import { SpendGauge } from "@/components/spend-gauge";

export default async function OperatorDashboardPage() {
  const actor = await requirePagePermission("operator.view", "/operator");
  // The dashboard asks the substrate for the provider account: its deps are the run context's.
  const { health, tasks, account, dispatch, dashboard, spend } = await readDashboardPage(await getRunContext(), {
    actor,
  });
  const { quarantined, byState } = dashboard;
  return (
    <section className="space-y-6">
      <div className="flex flex-wrap items-center gap-3">
        <h1>Operator dashboard</h1>
        {/* Polls the server components; no client-side data layer, no manual reload. */}
        <AutoRefresh isActive intervalMs={5000} />
      </div>
      <HealthPanel health={health} />
      <dl className="grid grid-cols-1 gap-3 text-sm sm:grid-cols-3" data-testid="operator-summary">
        <div className="rounded border border-slate-200 bg-white p-3">
          <dt className="text-slate-600">
            <Link href="/operator/spend">Spend this month ({spend.month})</Link>
          </dt>
          <dd className="mt-1">
            <SpendGauge
              committedMicros={spend.monthCommittedMicros}
              ceilingMicros={spend.ceilings.monthlyGlobalMicros}
            />
          </dd>
        </div>
        <div className="rounded border border-slate-200 bg-white p-3">
          <dt className="text-slate-600">Live machines</dt>
          <dd data-testid="live-machines">
            <Link href="/operator/machines">{dashboard.liveMachines}</Link>
          </dd>
          <dd className="text-xs text-slate-600" data-testid="machine-cap">
            {dashboard.slots.cap === null ? (
              <>
                {dashboard.slots.taken} slots taken, no cap on {dashboard.slots.substrate}
              </>
            ) : (
              <span className={dashboard.slots.taken >= dashboard.slots.cap ? "font-semibold text-amber-800" : ""}>
                {dashboard.slots.taken} of {dashboard.slots.cap} slots taken on {dashboard.slots.substrate}
                {dashboard.slots.taken >= dashboard.slots.cap && " — new tasks wait"}
              </span>
            )}{" "}
            · <Link href="/operator/limits">cap</Link>
          </dd>
        </div>
        <div className="rounded border border-slate-200 bg-white p-3">
          <dt className="text-slate-600">Substrate ({account.label})</dt>
          <dd data-testid="provider-account">
            {account.kind === "ok" ? (
              <>
                {account.status} · headroom {formatMicros(account.headroomMicros)} ({account.source})
                {account.isLowBalance && (
                  <strong className="block text-red-800">Low balance: new machines may soon be refused.</strong>
                )}
              </>
            ) : account.kind === "unobservable" ? (
              <strong className="text-red-800">Headroom unobservable — creates are refused: {account.reason}</strong>
            ) : (
              <strong className="text-red-800">Unreachable: {account.reason}</strong>
            )}
          </dd>
        </div>
        <div className="rounded border border-slate-200 bg-white p-3">
          <dt className="text-slate-600">Dispatch</dt>
          <dd>
            <Link href="/operator/probes">
              <DispatchLabel gate={dispatch} />
            </Link>
          </dd>
        </div>
        <div className="rounded border border-slate-200 bg-white p-3">
          <dt className="text-slate-600">Quarantined machines</dt>
          <dd className={quarantined > 0 ? "font-semibold text-red-800" : ""}>
            <Link href="/operator/quarantine">{quarantined}</Link>
          </dd>
        </div>
      </dl>
      {byState.length > 0 && (
        <p className="flex flex-wrap gap-2 text-sm" data-testid="task-counts">
          {byState.map((row) => (
            <Link key={row.state} href={`/operator/tasks?state=${row.state}`} className="no-underline">
              <StateBadge state={row.state} /> {row.count}
            </Link>
          ))}
        </p>
      )}
      {dashboard.failures.length > 0 && (
        <div className="space-y-2">
          <h2>Last failures</h2>
          <ul className="space-y-1 text-sm" data-testid="last-failures">
            {dashboard.failures.map((f) => (
              <li key={f.id} className="rounded border border-red-100 bg-white p-2">
                <StateBadge state={f.state} />{" "}
                <Link href={`/operator/tasks/${f.id}`}>
                  {f.repository} #{f.issueNumber} {f.issueTitle}
                </Link>{" "}
                <span className="text-xs text-slate-500">
                  {formatDateTime(f.updatedAt)} · attempt {f.attempt}
                  {f.autoRetryAt ? ` · automatic retry at ${formatTime(f.autoRetryAt)}` : ""}
                </span>
                <span className="block break-words text-xs text-red-900">
                  <span className="font-mono">{f.errorCode}</span> {f.errorSummary}
                </span>
              </li>
            ))}
          </ul>
        </div>
      )}
      <div className="space-y-2">
        <h2>Recent tasks</h2>
        {tasks.items.length === 0 ? (
          <EmptyState title="No tasks yet">Tasks appear here once one is created.</EmptyState>
        ) : (
          <DataTable testId="task-table" headers={["Repository", "Issue", "State", "Created"]}>
            {tasks.items.map((task) => (
              <tr key={task.id} className="border-t border-slate-200">
                <td className="p-2">{task.repository}</td>
                <td className="p-2">
                  <Link href={`/operator/tasks/${task.id}`}>
                    #{task.issueNumber} {task.issueTitle}
                  </Link>
                </td>
                <td className="p-2">
                  <StateBadge state={task.state} />
                </td>
                <td className="p-2">{formatDateTime(task.createdAt, { precision: "second" })}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </div>
    </section>
  );
}
