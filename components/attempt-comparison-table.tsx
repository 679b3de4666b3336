/** One issue's attempts side by side (issue 26): each row links to that attempt's review page. */
import Link from "next/link";
import { DataTable } from "@/components/data-table";
import { StateBadge } from "@/components/state-badge";
import type { TAttemptComparison } from "@/lib/review/read-attempt-comparison";
import { formatCount, formatSeconds } from "@/lib/format/format";
import { formatMicros } from "@/lib/spend/spend-guard";

export function AttemptComparisonTable({ comparison }: { comparison: TAttemptComparison }) {
  const { group, attempts } = comparison;
  return (
    <DataTable
      testId="attempt-comparison"
      headers={[
        "Agent",
        "Owner",
        "State",
        "Checks passed / failed",
        "Files, lines",
        "Rounds",
        "Tokens",
        "Cost",
        "Time to review",
        "Review page",
      ]}
    >
      {attempts.map((a) => (
        <tr key={a.taskId} className="border-t border-slate-200" data-testid="attempt-row" data-state={a.state}>
          <td className="p-2">
            {a.agent ?? "default agent"}
            {a.profileVersion !== null && <span className="text-xs text-slate-500"> v{a.profileVersion}</span>}
            {group.chosenTaskId === a.taskId && (
              <span
                className="ml-2 rounded bg-emerald-100 px-2 py-0.5 text-xs font-medium text-emerald-900"
                data-testid="attempt-chosen"
              >
                chosen
              </span>
            )}
          </td>
          <td className="p-2" data-testid="attempt-owner">
            {a.isOwnerHidden ? <span className="italic text-slate-500">hidden until decided</span> : (a.owner ?? "—")}
          </td>
          <td className="p-2">
            <StateBadge state={a.state} />
          </td>
          <td className="p-2" data-testid="attempt-checks">
            {a.checksPassed === null ? "—" : `${a.checksPassed} / ${a.checksFailed}`}
          </td>
          <td className="p-2">
            {a.filesChanged === null ? "—" : `${a.filesChanged} ${a.filesChanged === 1 ? "file" : "files"}`}
            {a.linesAdded !== null && (
              <span className="text-xs text-slate-600">
                {" "}
                +{a.linesAdded} −{a.linesDeleted}
              </span>
            )}
          </td>
          <td className="p-2">{a.rounds}</td>
          <td className="p-2">{formatCount(a.inputTokens + a.outputTokens)}</td>
          <td className="p-2">{formatMicros(a.costMicros)}</td>
          <td className="p-2">{formatSeconds(a.secondsToReview)}</td>
          <td className="p-2">
            {a.candidateId ? (
              <Link href={`/teacher/candidates/${a.candidateId}`} data-testid="attempt-review-link">
                Review
              </Link>
            ) : (
              <span className="text-xs text-slate-500">no candidate yet</span>
            )}
          </td>
        </tr>
      ))}
    </DataTable>
  );
}
