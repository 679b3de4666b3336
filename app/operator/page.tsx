import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { EmptyState } from "@/components/empty-state";
import { HealthPanel } from "@/components/health-panel";
import { StateBadge } from "@/components/state-badge";
import { readHealth } from "@/lib/health/read-health";
import { listRecentTasks } from "@/lib/tasks/list-tasks";
import { getRunContext } from "@/app/_server/run-context";
import { readProviderAccount } from "@/lib/spend/read-provider-account";
import { formatMicros } from "@/lib/spend/spend-guard";
import { readSetting } from "@/lib/settings/operator-settings";
import { DataTable } from "@/components/data-table";

export default async function OperatorDashboardPage() {
  await requirePagePermission("operator.view", "/operator");
  const ctx = await getRunContext();
  const [health, tasks, account, quarantined, dispatch, byState] = await Promise.all([
    readHealth(),
    listRecentTasks({ take: 20 }),
    readProviderAccount(ctx.substrate),
    ctx.db.guestMachine.count({ where: { state: "cleanup_quarantined" } }),
    readSetting(ctx.db, "dispatch"),
    ctx.db.task.groupBy({ by: ["state"], _count: { _all: true } }),
  ]);
  return (
    <section className="space-y-6">
      <h1>Operator dashboard</h1>
      <HealthPanel health={health} />
      <dl className="grid grid-cols-1 gap-3 text-sm sm:grid-cols-3" data-testid="operator-summary">
        <div className="rounded border border-slate-200 bg-white p-3">
          <dt className="text-slate-600">Substrate ({account.label})</dt>
          <dd data-testid="provider-account">
            {account.kind === "ok" ? (
              <>
                {account.status} · headroom {formatMicros(account.headroomMicros)} ({account.source})
                {account.isLowBalance && <strong className="block text-red-800">Low balance: new machines may soon be refused.</strong>}
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
            <Link href="/operator/settings">{dispatch.enabled ? "on" : "off (tasks stay queued)"}</Link>
          </dd>
        </div>
        <div className="rounded border border-slate-200 bg-white p-3">
          <dt className="text-slate-600">Quarantined machines</dt>
          <dd className={quarantined > 0 ? "font-semibold text-red-800" : ""}>
            <Link href="/operator/machines">{quarantined}</Link>
          </dd>
        </div>
      </dl>
      {byState.length > 0 && (
        <p className="flex flex-wrap gap-2 text-sm" data-testid="task-counts">
          {byState.map((row) => (
            <Link key={row.state} href={`/operator/tasks?state=${row.state}`} className="no-underline">
              <StateBadge state={row.state} /> {row._count._all}
            </Link>
          ))}
        </p>
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
                    <Link href={`/operator/tasks/${task.id}`}>#{task.issueNumber} {task.issueTitle}</Link>
                  </td>
                  <td className="p-2"><StateBadge state={task.state} /></td>
                  <td className="p-2">{task.createdAt.toISOString().replace("T", " ").slice(0, 19)}</td>
                </tr>
              ))}
          </DataTable>
        )}
      </div>
    </section>
  );
}
