import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { DataTable, NUMERIC_CELL } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { DateRangeFields, FilterBar } from "@/components/filter-bar";
import { Pager, queryString } from "@/components/pager";
import { StateBadge } from "@/components/state-badge";
import { getPageDeps } from "@/app/_server/page-data";
import { readReviewHistoryPage } from "@/lib/pages/teacher/review-history-page";
import { formatDateTime } from "@/lib/format/format";

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);
const VERDICT_TEXT = { approve: "approved", reject: "rejected", request_changes: "changes requested" } as const;
const VERDICT_STATE = { approve: "approved", reject: "rejected", request_changes: "changes_requested" } as const;
const PR_STATE = { pending: "pr_pending", open: "pr_open", failed: "pr_failed" } as const;

export default async function ReviewHistoryPage({ searchParams }: Props) {
  const actor = await requirePagePermission("review.view", "/teacher/history");
  const params = await searchParams;
  const history = await readReviewHistoryPage(await getPageDeps(), {
    actor,
    scope: first(params.scope) as never,
    repository: first(params.repository),
    verdict: first(params.verdict) as never,
    from: first(params.from),
    to: first(params.to),
    page: first(params.page) as never,
  });
  const { query } = history;
  const filters = {
    scope: query.scope === "all" ? undefined : query.scope,
    repository: query.repository,
    verdict: query.verdict,
    from: query.from,
    to: query.to,
  };
  const hrefOf = (page: number) =>
    `/teacher/history${queryString({ ...filters, page: page === 1 ? undefined : page })}`;
  const isFiltered = Object.values(filters).some(Boolean);
  return (
    <section className="space-y-4">
      <h1>Review history</h1>
      <FilterBar
        testId="history-filters"
        tone="neutral"
        links={isFiltered && <Link href="/teacher/history">Clear filters</Link>}
      >
        <label className="block">
          Decisions
          <select name="scope" defaultValue={query.scope} className="mt-1 block rounded border border-slate-300 p-1">
            <option value="all">Everyone&apos;s</option>
            <option value="mine">Mine</option>
          </select>
        </label>
        <label className="block">
          Repository
          <input
            name="repository"
            defaultValue={query.repository ?? ""}
            placeholder="owner/name"
            className="mt-1 block w-44 rounded border border-slate-300 p-1"
          />
        </label>
        <label className="block">
          Verdict
          <select
            name="verdict"
            defaultValue={query.verdict ?? ""}
            className="mt-1 block rounded border border-slate-300 p-1"
          >
            <option value="">Any verdict</option>
            <option value="approve">Approved</option>
            <option value="request_changes">Changes requested</option>
            <option value="reject">Rejected</option>
          </select>
        </label>
        <DateRangeFields
          from={query.from}
          to={query.to}
          controlClassName="mt-1 block rounded border border-slate-300 p-1"
        />
      </FilterBar>
      {history.items.length === 0 ? (
        <EmptyState title={isFiltered ? "No decision matches these filters" : "No decisions yet"}>
          Every approval, rejection and request for changes is listed here.
        </EmptyState>
      ) : (
        <DataTable
          testId="history-table"
          headers={[
            "Decided",
            "Task",
            { label: "Round", isNumeric: true },
            "Verdict",
            "Comment",
            "Evidence",
            "Pull request",
          ]}
        >
          {history.items.map((item) => (
            <tr key={item.decisionId} className="border-t border-slate-200 align-top" data-testid="history-row">
              <td className="whitespace-nowrap p-2 text-xs text-slate-600">
                {formatDateTime(item.decidedAt)}
                <br />
                {item.isMine ? "you" : item.teacher}
              </td>
              <td className="p-2">
                <Link href={`/teacher/candidates/${item.candidateId}`}>
                  {item.repository} #{item.issueNumber}
                </Link>
                <p className="max-w-56 truncate text-xs text-slate-600" title={item.issueTitle}>
                  {item.issueTitle}
                </p>
              </td>
              <td className={NUMERIC_CELL}>{item.round}</td>
              <td className="p-2">
                <StateBadge state={VERDICT_STATE[item.verdict]} />
                <span className="sr-only">{VERDICT_TEXT[item.verdict]}</span>
              </td>
              <td className="max-w-80 p-2">
                <p className="line-clamp-3 whitespace-pre-wrap break-words" title={item.comment.slice(0, 1000)}>
                  {item.comment}
                </p>
              </td>
              <td className="p-2">
                <StateBadge state={item.evidenceStatus === "pass" ? "passed" : "failed"} />
              </td>
              <td className="p-2 text-xs">
                {item.pullRequest && item.pullRequest.isFromThisRound ? (
                  <span className="flex flex-wrap items-center gap-1">
                    <StateBadge state={PR_STATE[item.pullRequest.state]} />
                    {item.pullRequest.url &&
                    item.pullRequest.number !== null &&
                    /^https?:\/\//.test(item.pullRequest.url) ? (
                      <a href={item.pullRequest.url} rel="noreferrer noopener" target="_blank">
                        #{item.pullRequest.number}
                      </a>
                    ) : null}
                  </span>
                ) : (
                  <span className="text-slate-600">—</span>
                )}
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <Pager page={history.page} pageSize={history.pageSize} total={history.total} hrefOf={hrefOf} />
    </section>
  );
}
