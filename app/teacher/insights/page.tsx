import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { DataTable, NUMERIC_CELL } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { ApprovalRatesChart, RoundsToApprovalChart } from "@/components/insights-charts";
import { getPageDeps } from "@/app/_server/page-data";
import { readInsightsPage } from "@/lib/pages/teacher/insights-page";
import type { TInsightsRow } from "@/lib/review/read-review-insights";
import { formatBytes, formatCompactCount, formatSeconds } from "@/lib/format/format";
import { formatMicros } from "@/lib/spend/spend-guard";

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

const WINDOWS = [
  [7, "7 days"],
  [30, "30 days"],
  [90, "90 days"],
  [365, "a year"],
  [0, "all time"],
] as const;

const pct = (value: number | null) => (value === null ? "—" : `${Math.round(value * 100)}%`);
const num = (value: number | null, digits = 1) => (value === null ? "—" : value.toFixed(digits));

function InsightsTable({ rows, groupLabel, testId }: { rows: TInsightsRow[]; groupLabel: string; testId: string }) {
  const numeric = (label: string) => ({ label, isNumeric: true }) as const;
  return (
    <DataTable
      testId={testId}
      headers={[
        groupLabel,
        numeric("Tasks"),
        numeric("Decided"),
        numeric("Approval"),
        numeric("Round-1 approval"),
        numeric("Rounds to approval"),
        numeric("Check pass rate"),
        numeric("Created → review"),
        numeric("Review → decision"),
        numeric("Relay per approved"),
        numeric("Tokens per approved (in / out)"),
        numeric("Model cost per approved"),
      ]}
    >
      {rows.map((row) => (
        <tr key={row.key} className="border-t border-slate-200" data-testid="insights-row">
          <td className="max-w-72 break-words p-2">{row.label}</td>
          <td className={NUMERIC_CELL}>{row.tasks}</td>
          <td className={NUMERIC_CELL}>{row.decided}</td>
          <td className={NUMERIC_CELL}>{pct(row.approvalRate)}</td>
          <td className={NUMERIC_CELL}>{pct(row.firstRoundApprovalRate)}</td>
          <td className={NUMERIC_CELL}>{num(row.meanRoundsToApproval)}</td>
          <td className={NUMERIC_CELL}>{pct(row.checkPassRate)}</td>
          <td className={NUMERIC_CELL}>{formatSeconds(row.medianSecondsToReview)}</td>
          <td className={NUMERIC_CELL}>{formatSeconds(row.medianSecondsToDecision)}</td>
          <td className={`whitespace-nowrap ${NUMERIC_CELL}`}>
            {row.relayCallsPerApproved === null
              ? "—"
              : `${num(row.relayCallsPerApproved)} calls · ${formatBytes(row.relayBytesPerApproved)}`}
          </td>
          <td className={`whitespace-nowrap ${NUMERIC_CELL}`} data-testid="insights-tokens">
            {row.inputTokensPerApproved === null
              ? "—"
              : `${formatCompactCount(row.inputTokensPerApproved)} / ${formatCompactCount(row.outputTokensPerApproved)}`}
          </td>
          <td className={`whitespace-nowrap ${NUMERIC_CELL}`} data-testid="insights-model-cost">
            {row.modelCostMicrosPerApproved === null ? "—" : formatMicros(row.modelCostMicrosPerApproved)}
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

export default async function ReviewInsightsPage({ searchParams }: Props) {
  const actor = await requirePagePermission("review.view", "/teacher/insights");
  const days = (await searchParams).days;
  const insights = await readInsightsPage(await getPageDeps(), {
    actor,
    days: (Array.isArray(days) ? days[0] : days) as never,
  });
  const windowDays = insights.query.days;
  return (
    <section className="space-y-5">
      <div className="flex flex-wrap items-center gap-3">
        <h1>Insights</h1>
        <nav className="ml-auto flex flex-wrap gap-2 text-sm" aria-label="Time window">
          {WINDOWS.map(([value, label]) => (
            <Link
              key={value}
              href={value === 90 ? "/teacher/insights" : `/teacher/insights?days=${value}`}
              aria-current={value === windowDays ? "page" : undefined}
              className={`rounded border px-2 py-0.5 no-underline ${value === windowDays ? "border-slate-800 bg-slate-800 text-white" : "border-slate-300 bg-white"}`}
            >
              {label}
            </Link>
          ))}
        </nav>
      </div>
      <p className="text-sm text-slate-600">
        Tasks created {windowDays === 0 ? "at any time" : `in the last ${windowDays} days`}. A task counts as decided
        once it is approved or rejected; &ldquo;Request changes&rdquo; only ends a round. Times are medians. Relay
        usage, tokens and model cost are those of the approved tasks&apos; model relay calls, all rounds and attempts,
        per approved task (one pull request each); tokens are what the upstream reported, and the cost is what the calls
        were charged at the price their capability was issued under.
      </p>
      <form
        method="get"
        action="/teacher/insights/results.csv"
        className="flex flex-wrap items-end gap-3 text-sm"
        data-testid="results-export"
      >
        <input type="hidden" name="format" value="csv" />
        <label className="block">
          Repository
          <input name="repository" placeholder="all" className="mt-1 block rounded border border-slate-300 p-1" />
        </label>
        <label className="block">
          From
          <input type="date" name="from" className="mt-1 block rounded border border-slate-300 p-1" />
        </label>
        <label className="block">
          To
          <input type="date" name="to" className="mt-1 block rounded border border-slate-300 p-1" />
        </label>
        <button type="submit" className="rounded border border-slate-800 px-3 py-1">
          Download results (CSV)
        </button>
      </form>
      {insights.byRepository.length === 0 ? (
        <EmptyState title="No tasks in this window">
          Insights appear once tasks have been created and reviewed.
        </EmptyState>
      ) : (
        <>
          <div className="space-y-2">
            <h2>Per repository</h2>
            <ApprovalRatesChart
              rows={insights.byRepository.map((r) => ({
                name: r.label,
                approvalRate: r.approvalRate,
                firstRoundApprovalRate: r.firstRoundApprovalRate,
              }))}
              testId="repository-rates-chart"
              label="Approval rate and round-1 approval rate per repository"
            />
            <InsightsTable rows={insights.byRepository} groupLabel="Repository" testId="insights-by-repository" />
          </div>
          <div className="space-y-2">
            <h2>Per student-agent configuration</h2>
            <ApprovalRatesChart
              rows={insights.byAgent.map((r) => ({
                name: r.label,
                approvalRate: r.approvalRate,
                firstRoundApprovalRate: r.firstRoundApprovalRate,
              }))}
              testId="agent-rates-chart"
              label="Approval rate and round-1 approval rate per student-agent configuration"
            />
            <InsightsTable rows={insights.byAgent} groupLabel="Agent command · image" testId="insights-by-agent" />
          </div>
          <div className="space-y-2">
            <h2>Per agent profile</h2>
            <ApprovalRatesChart
              rows={insights.byProfile.map((r) => ({
                name: r.label,
                approvalRate: r.approvalRate,
                firstRoundApprovalRate: r.firstRoundApprovalRate,
              }))}
              testId="profile-rates-chart"
              label="Approval rate and round-1 approval rate per agent profile"
            />
            <InsightsTable rows={insights.byProfile} groupLabel="Agent profile · owner" testId="insights-by-profile" />
          </div>
          <div className="space-y-2">
            <h2>Rounds to approval</h2>
            {insights.roundsToApproval.length === 0 ? (
              <p className="text-sm text-slate-600">No task was approved in this window.</p>
            ) : (
              <RoundsToApprovalChart rows={insights.roundsToApproval} />
            )}
          </div>
        </>
      )}
    </section>
  );
}
