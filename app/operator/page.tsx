import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { EmptyState } from "@/components/empty-state";
import { HealthPanel } from "@/components/health-panel";
import { StateBadge } from "@/components/state-badge";
import { readHealth } from "@/lib/health/read-health";
import { listRecentTasks } from "@/lib/lifecycle/list-tasks";

export default async function OperatorDashboardPage() {
  await requirePagePermission("operator.view", "/operator");
  const [health, tasks] = await Promise.all([readHealth(), listRecentTasks({ take: 20 })]);
  return (
    <section className="space-y-6">
      <h1>Operator dashboard</h1>
      <HealthPanel health={health} />
      <div className="space-y-2">
        <h2>Recent tasks</h2>
        {tasks.items.length === 0 ? (
          <EmptyState title="No tasks yet">Tasks appear here once one is created.</EmptyState>
        ) : (
          <table className="w-full border-collapse overflow-hidden rounded border border-slate-200 bg-white text-sm" data-testid="task-table">
            <thead className="bg-slate-100 text-left">
              <tr>
                <th className="p-2">Repository</th>
                <th className="p-2">Issue</th>
                <th className="p-2">State</th>
                <th className="p-2">Created</th>
              </tr>
            </thead>
            <tbody>
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
            </tbody>
          </table>
        )}
      </div>
    </section>
  );
}
