import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { EmptyState } from "@/components/empty-state";
import { ApprovalRatesChart, RoundsToApprovalChart } from "@/components/insights-charts";
import { getPageDeps } from "@/app/_server/page-data";
import { readInsightsPage } from "@/lib/pages/teacher/insights-page";
import type { TInsightsRow } from "@/lib/review/read-review-insights";
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

function duration(seconds: number | null): string {
  if (seconds === null) return "—";
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 90 * 60) return `${Math.round(seconds / 60)} min`;
  if (seconds < 48 * 3600) return `${(seconds / 3600).toFixed(1)} h`;
  return `${(seconds / 86400).toFixed(1)} d`;
}

function bytes(value: number | null): string {
  if (value === null) return "—";
  if (value < 1024) return `${Math.round(value)} B`;
  if (value < 1024 * 1024) return `${(value / 1024).toFixed(1)} KiB`;
  return `${(value / 1024 / 1024).toFixed(1)} MiB`;
}

/** 12345 → "12.3k": token counts per approved task, readable at a glance. */
function tokens(value: number | null): string {
  if (value === null) return "—";
  if (value < 1000) return String(Math.round(value));
  if (value < 1_000_000) return `${(value / 1000).toFixed(1)}k`;
  return `${(value / 1_000_000).toFixed(2)}M`;
}

function InsightsTable({ rows, groupLabel, testId }: { rows: TInsightsRow[]; groupLabel: string; testId: string }) {
  return (
    <div className="overflow-x-auto rounded border border-slate-200 bg-white">
      <table className="w-full text-left text-sm" data-testid={testId}>
        <thead className="bg-slate-50 text-xs uppercase text-slate-600">
          <tr>
            <th className="px-3 py-2">{groupLabel}</th>
            <th className="px-3 py-2 text-right">Tasks</th>
            <th className="px-3 py-2 text-right">Decided</th>
            <th className="px-3 py-2 text-right">Approval</th>
            <th className="px-3 py-2 text-right">Round-1 approval</th>
            <th className="px-3 py-2 text-right">Rounds to approval</th>
            <th className="px-3 py-2 text-right">Check pass rate</th>
            <th className="px-3 py-2 text-right">Created → review</th>
            <th className="px-3 py-2 text-right">Review → decision</th>
            <th className="px-3 py-2 text-right">Relay per approved</th>
            <th className="px-3 py-2 text-right">Tokens per approved (in / out)</th>
            <th className="px-3 py-2 text-right">Model cost per approved</th>
          </tr>
        </thead>
        <tbody className="divide-y divide-slate-200">
          {rows.map((row) => (
            <tr key={row.key} data-testid="insights-row">
              <td className="max-w-72 break-words px-3 py-2">{row.label}</td>
              <td className="px-3 py-2 text-right tabular-nums">{row.tasks}</td>
              <td className="px-3 py-2 text-right tabular-nums">{row.decided}</td>
              <td className="px-3 py-2 text-right tabular-nums">{pct(row.approvalRate)}</td>
              <td className="px-3 py-2 text-right tabular-nums">{pct(row.firstRoundApprovalRate)}</td>
              <td className="px-3 py-2 text-right tabular-nums">{num(row.meanRoundsToApproval)}</td>
              <td className="px-3 py-2 text-right tabular-nums">{pct(row.checkPassRate)}</td>
              <td className="px-3 py-2 text-right tabular-nums">{duration(row.medianSecondsToReview)}</td>
              <td className="px-3 py-2 text-right tabular-nums">{duration(row.medianSecondsToDecision)}</td>
              <td className="whitespace-nowrap px-3 py-2 text-right tabular-nums">
                {row.relayCallsPerApproved === null ? "—" : `${num(row.relayCallsPerApproved)} calls · ${bytes(row.relayBytesPerApproved)}`}
              </td>
              <td className="whitespace-nowrap px-3 py-2 text-right tabular-nums" data-testid="insights-tokens">
                {row.inputTokensPerApproved === null
                  ? "—"
                  : `${tokens(row.inputTokensPerApproved)} / ${tokens(row.outputTokensPerApproved)}`}
              </td>
              <td className="whitespace-nowrap px-3 py-2 text-right tabular-nums" data-testid="insights-model-cost">
                {row.modelCostMicrosPerApproved === null ? "—" : formatMicros(row.modelCostMicrosPerApproved)}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

export default async function ReviewInsightsPage({ searchParams }: Props) {
  const actor = await requirePagePermission("review.view", "/teacher/insights");
  const days = (await searchParams).days;
  const insights = await readInsightsPage(await getPageDeps(), { actor, days: (Array.isArray(days) ? days[0] : days) as never });
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
        Tasks created {windowDays === 0 ? "at any time" : `in the last ${windowDays} days`}. A task counts as decided once it is approved or
        rejected; &ldquo;Request changes&rdquo; only ends a round. Times are medians. Relay usage, tokens and model cost are those of the
        approved tasks&apos; model relay calls, all rounds and attempts, per approved task (one pull request each); tokens are what the
        upstream reported, and the cost is what the calls were charged at the price their capability was issued under.
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
        <EmptyState title="No tasks in this window">Insights appear once tasks have been created and reviewed.</EmptyState>
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
