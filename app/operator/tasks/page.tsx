import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { EmptyState } from "@/components/empty-state";
import { StateBadge } from "@/components/state-badge";
import { getPageDeps } from "@/app/_server/page-data";
import { readTasksPage } from "@/lib/pages/operator/tasks-page";
import { formatDateTime } from "@/lib/format/format";
import { TASK_STATES } from "@/lib/tasks/task-states";
import { DataTable } from "@/components/data-table";

type Props = { searchParams: Promise<{ state?: string; before?: string }> };

export default async function TasksPage({ searchParams }: Props) {
  const actor = await requirePagePermission("operator.view", "/operator/tasks");
  const params = await searchParams;
  const { items, nextBefore, state } = await readTasksPage(await getPageDeps(), {
    actor,
    state: params.state,
    before: params.before,
  });
  return (
    <section className="space-y-4">
      <div className="flex flex-wrap items-center gap-3">
        <h1>Tasks</h1>
        <Link
          href="/operator/tasks/new"
          className="ml-auto rounded bg-blue-700 px-3 py-1.5 text-sm text-white no-underline hover:bg-blue-800"
        >
          New task
        </Link>
      </div>
      <form className="flex flex-wrap items-center gap-2 text-sm" method="get">
        <label>
          State{" "}
          <select name="state" defaultValue={state ?? ""} className="rounded border border-slate-300 px-2 py-1">
            <option value="">all</option>
            {TASK_STATES.map((s) => (
              <option key={s} value={s}>
                {s}
              </option>
            ))}
          </select>
        </label>
        <button className="rounded border border-slate-300 px-2 py-1" type="submit">
          Filter
        </button>
      </form>
      {items.length === 0 ? (
        <EmptyState title="No tasks">{state ? `No task is ${state}.` : "Create one with “New task”."}</EmptyState>
      ) : (
        <DataTable testId="task-table" headers={["Task", "Repository", "State", "Error", "Created"]}>
          {items.map((task) => (
            <tr key={task.id} className="border-t border-slate-200 align-top">
              <td className="p-2">
                <Link href={`/operator/tasks/${task.id}`}>
                  #{task.issueNumber} {task.issueTitle}
                </Link>
              </td>
              <td className="p-2">{task.repository}</td>
              <td className="p-2">
                <StateBadge state={task.state} />
              </td>
              <td className="max-w-xs truncate p-2 text-red-800" title={task.errorSummary ?? ""}>
                {task.errorSummary}
              </td>
              <td className="whitespace-nowrap p-2">{formatDateTime(task.createdAt, { precision: "second" })}</td>
            </tr>
          ))}
        </DataTable>
      )}
      {nextBefore && (
        <Link
          href={`/operator/tasks?${new URLSearchParams({ ...(state ? { state } : {}), before: nextBefore.toISOString() })}`}
        >
          Older tasks →
        </Link>
      )}
    </section>
  );
}
