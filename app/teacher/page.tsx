import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { EmptyState } from "@/components/empty-state";
import { FilterBar } from "@/components/filter-bar";
import { Pager, queryString } from "@/components/pager";
import { StateBadge } from "@/components/state-badge";
import { getPageDeps } from "@/app/_server/page-data";
import { readReviewQueuePage } from "@/lib/pages/teacher/review-queue-page";
import type { TReviewQueueItem } from "@/lib/review/list-review-queue";
import { formatDateTime } from "@/lib/format/format";
import { AttemptComparisonTable } from "@/components/attempt-comparison-table";

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value);

export default async function TeacherPage({ searchParams }: Props) {
  const actor = await requirePagePermission("review.view", "/teacher");
  const params = await searchParams;
  const { queue, entries, isFiltered } = await readReviewQueuePage(await getPageDeps(), {
    actor,
    repository: first(params.repository),
    rounds: first(params.rounds) as never,
    page: first(params.page) as never,
  });
  const { query } = queue;
  const hrefOf = (page: number) =>
    `/teacher${queryString({ repository: query.repository, rounds: query.rounds === "all" ? undefined : query.rounds, page: page === 1 ? undefined : page })}`;
  return (
    <section className="space-y-4">
      <h1>Review queue</h1>
      <FilterBar testId="queue-filters" tone="neutral" links={isFiltered && <Link href="/teacher">Clear filters</Link>}>
        <label className="block">
          Repository
          <select
            name="repository"
            defaultValue={query.repository ?? ""}
            className="mt-1 block rounded border border-slate-300 p-1"
          >
            <option value="">All repositories</option>
            {queue.repositories.map((name) => (
              <option key={name} value={name}>
                {name}
              </option>
            ))}
          </select>
        </label>
        <label className="block">
          Rounds
          <select name="rounds" defaultValue={query.rounds} className="mt-1 block rounded border border-slate-300 p-1">
            <option value="all">All rounds</option>
            <option value="first">First rounds</option>
            <option value="revisions">Revisions (answering feedback)</option>
          </select>
        </label>
      </FilterBar>
      {queue.items.length === 0 ? (
        <EmptyState title={isFiltered ? "Nothing matches these filters" : "Nothing to review"}>
          Candidates appear here once their trusted checks have run.
        </EmptyState>
      ) : (
        <ul className="divide-y divide-slate-200 rounded border border-slate-200 bg-white" data-testid="review-queue">
          {entries.map((entry) =>
            entry.kind === "group" ? (
              <li key={entry.comparison.group.id} className="space-y-2 p-3" data-testid="attempt-group">
                <div>
                  {entry.item.repository} #{entry.item.issueNumber} — {entry.item.issueTitle}{" "}
                  <span className="rounded bg-sky-100 px-2 py-0.5 text-xs font-medium text-sky-900">
                    {entry.comparison.attempts.length} attempts: approving one ends the others
                  </span>
                </div>
                <AttemptComparisonTable comparison={entry.comparison} />
              </li>
            ) : (
              <QueueRow key={entry.item.candidateId} item={entry.item} />
            ),
          )}
        </ul>
      )}
      <Pager page={queue.page} pageSize={queue.pageSize} total={queue.total} hrefOf={hrefOf} />
    </section>
  );
}

function QueueRow({ item }: { item: TReviewQueueItem }) {
  return (
    <li className="flex flex-wrap items-center gap-3 p-3">
      <Link href={`/teacher/candidates/${item.candidateId}`} data-testid="review-link">
        {item.repository} #{item.issueNumber} — {item.issueTitle}
      </Link>
      {item.round > 1 && (
        <span
          className="rounded bg-violet-100 px-2 py-0.5 text-xs font-medium text-violet-900"
          data-testid="queue-round"
        >
          round {item.round}
        </span>
      )}
      <StateBadge
        state={item.evidenceStatus === "pass" ? "passed" : item.evidenceStatus === "stale" ? "stale" : "failed"}
      />
      <span className="text-xs text-slate-500">
        evidence {item.evidenceStatus} · waiting since {formatDateTime(item.waitingSince)}
      </span>
    </li>
  );
}
