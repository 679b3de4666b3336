import { requirePagePermission } from "@/app/_server/guard";
import { EmptyState } from "@/components/empty-state";
import { listReviewQueue } from "@/lib/review/list-review-queue";

export default async function TeacherPage() {
  await requirePagePermission("review.view", "/teacher");
  const queue = await listReviewQueue();
  return (
    <section className="space-y-4">
      <h1>Review queue</h1>
      {queue.length === 0 ? (
        <EmptyState title="Nothing to review">Candidates appear here once their trusted checks have run.</EmptyState>
      ) : (
        <ul className="divide-y divide-slate-200 rounded border border-slate-200 bg-white" data-testid="review-queue">
          {queue.map((item) => (
            <li key={item.taskId} className="p-3">
              <span className="font-medium">{item.repository}</span> #{item.issueNumber} — {item.issueTitle}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
