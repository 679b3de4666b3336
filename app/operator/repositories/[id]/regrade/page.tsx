// Regrade (issue 26): re-run the trusted checks for every candidate of one repository still waiting
// for a decision (after the trusted manifest changed), and see which verdicts changed.
import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { ActionForm } from "@/components/action-form";
import { AutoRefresh } from "@/components/auto-refresh";
import { DataTable } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { getPageDeps, orNotFound } from "@/app/_server/page-data";
import { readRegradePage } from "@/lib/pages/operator/regrade-page";
import { formatDateTime } from "@/lib/format/format";
import { regradeRepositoryAction } from "./actions";

type Props = { params: Promise<{ id: string }> };

const verdict = (isPass: boolean | null) => (isPass === null ? "—" : isPass ? "pass" : "fail");

export default async function RegradePage({ params }: Props) {
  const { id } = await params;
  const actor = await requirePagePermission("task.reverify", `/operator/repositories/${id}/regrade`);
  const { repository, summary } = await orNotFound(readRegradePage(await getPageDeps(), { actor, repositoryId: id }));
  return (
    <section className="space-y-4">
      <h1>Regrade {repository.name}</h1>
      <p className="text-sm text-slate-600">
        Re-runs the trusted checks of the current manifest for every candidate of this repository still waiting for a
        decision — each as its own queued re-verification on a fresh verifier guest, under the machine cap. Decided
        candidates keep the evidence they were decided on. Open reviews of these candidates go stale.{" "}
        <Link href="/operator/repositories">Back to repositories</Link>
      </p>
      <ActionForm
        action={regradeRepositoryAction}
        submitLabel="Re-run trusted checks for every candidate"
        pendingLabel="Queueing…"
        testId="regrade-form"
      >
        <input type="hidden" name="repositoryId" value={repository.id} />
      </ActionForm>
      {!summary ? (
        <EmptyState title="No regrade yet">The summary of the latest regrade appears here.</EmptyState>
      ) : (
        <div className="space-y-2" data-testid="regrade-summary">
          <AutoRefresh isActive={summary.rows.some((r) => r.change === "pending")} intervalMs={5000} />
          <h2>
            Latest regrade: {formatDateTime(summary.at)} by {summary.by ?? "the CLI"} — {summary.changed} verdict(s)
            changed
          </h2>
          <DataTable testId="regrade-rows" headers={["Task", "Candidate", "Before", "Now", "Change"]}>
            {summary.rows.map((r) => (
              <tr key={r.taskId} className="border-t border-slate-200" data-change={r.change}>
                <td className="p-2 font-mono text-xs">
                  <Link href={`/operator/tasks/${r.taskId}`}>{r.taskId.slice(0, 8)}</Link>
                </td>
                <td className="p-2 font-mono text-xs">{r.candidateId}</td>
                <td className="p-2">{verdict(r.isPass)}</td>
                <td className="p-2">{r.change === "pending" ? "waiting for its checks" : verdict(r.afterIsPass)}</td>
                <td className={`p-2 ${r.change.includes("→") ? "font-semibold" : ""}`}>{r.change}</td>
              </tr>
            ))}
          </DataTable>
          {summary.skipped.length > 0 && (
            <p className="text-sm text-slate-600">
              {summary.skipped.length} candidate(s) skipped (decided or no longer waiting for review).
            </p>
          )}
        </div>
      )}
    </section>
  );
}
