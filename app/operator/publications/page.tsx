import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { ActionForm } from "@/components/action-form";
import { EmptyState } from "@/components/empty-state";
import { Field } from "@/components/form-field";
import { StateBadge } from "@/components/state-badge";
import { getPageDeps } from "@/app/_server/page-data";
import { readPublicationsPage } from "@/lib/pages/operator/publications-page";
import { formatDateTime } from "@/lib/format/format";
import { markPublicationFailedAction, retryPublicationAction } from "./actions";
import { DataTable } from "@/components/data-table";

export default async function PublicationsPage() {
  const actor = await requirePagePermission("operator.view", "/operator/publications");
  const { items, canManage } = await readPublicationsPage(await getPageDeps(), { actor });
  return (
    <section className="space-y-4">
      <h1>Publications needing attention</h1>
      <p className="text-sm text-slate-600">
        Pending publications are reconciled with the provider by candidate identity before anything is created; a retry
        never opens a second pull request.
      </p>
      {items.length === 0 ? (
        <EmptyState title="Nothing pending or failed">Every approved task has its pull request.</EmptyState>
      ) : (
        <DataTable
          testId="publication-table"
          headers={["Task", "State", "Reconciliation", "Attempts", "Next attempt", "Reason", canManage && "Actions"]}
        >
          {items.map((item) => (
            <tr
              key={item.taskId}
              className="border-t border-slate-200 align-top"
              data-testid="publication-row"
              data-task-id={item.taskId}
            >
              <td className="p-2">
                <Link href={`/operator/tasks/${item.taskId}`}>
                  {item.repository} #{item.issueNumber} {item.issueTitle}
                </Link>
                {item.number !== null && item.url && (
                  <div>
                    <a href={item.url} target="_blank" rel="noopener noreferrer">
                      PR #{item.number}
                    </a>
                  </div>
                )}
              </td>
              <td className="p-2">
                <StateBadge state={item.taskState} />
              </td>
              <td className="p-2">
                <code>{item.reconcileState}</code>
              </td>
              <td className="p-2">{item.attempts}</td>
              <td className="whitespace-nowrap p-2">
                {item.taskState === "pr_pending" ? formatDateTime(item.nextAttemptAt, { precision: "second" }) : "—"}
              </td>
              <td className="max-w-md whitespace-pre-wrap break-words p-2 text-red-800">{item.reason}</td>
              {canManage && (
                <td className="space-y-2 p-2">
                  <ActionForm
                    action={retryPublicationAction}
                    submitLabel="Retry"
                    pendingLabel="Retrying…"
                    size="xs"
                    className="space-y-1"
                    testId="retry-publication-form"
                  >
                    <input type="hidden" name="taskId" value={item.taskId} />
                  </ActionForm>
                  {item.taskState === "pr_pending" && (
                    <ActionForm
                      action={markPublicationFailedAction}
                      submitLabel="Mark failed"
                      pendingLabel="Marking…"
                      tone="danger"
                      size="xs"
                      className="space-y-1"
                      testId="mark-publication-failed-form"
                    >
                      <input type="hidden" name="taskId" value={item.taskId} />
                      <Field name="reason" label="Reason" className="text-xs">
                        <input
                          required
                          minLength={3}
                          maxLength={500}
                          className="w-40 rounded border border-slate-300 px-2 py-1 text-xs"
                        />
                      </Field>
                    </ActionForm>
                  )}
                </td>
              )}
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
