import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { EmptyState } from "@/components/empty-state";
import { StateBadge } from "@/components/state-badge";
import { getDb } from "@/lib/db/client";
import { listReviewQueue } from "@/lib/review/list-review-queue";

export default async function TeacherPage() {
  await requirePagePermission("review.view", "/teacher");
  const queue = await listReviewQueue(await getDb());
  return (
    <section className="space-y-4">
      <h1>Review queue</h1>
      {queue.length === 0 ? (
        <EmptyState title="Nothing to review">Candidates appear here once their trusted checks have run.</EmptyState>
      ) : (
        <ul className="divide-y divide-slate-200 rounded border border-slate-200 bg-white" data-testid="review-queue">
          {queue.map((item) => (
            <li key={item.candidateId} className="flex flex-wrap items-center gap-3 p-3">
              <Link href={`/teacher/candidates/${item.candidateId}`} data-testid="review-link">
                {item.repository} #{item.issueNumber} — {item.issueTitle}
              </Link>
              <StateBadge state={item.evidenceStatus === "pass" ? "passed" : item.evidenceStatus === "stale" ? "stale" : "failed"} />
              <span className="text-xs text-slate-500">evidence {item.evidenceStatus} · waiting since {item.waitingSince.toISOString().replace("T", " ").slice(0, 16)}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
