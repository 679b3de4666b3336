/**
 * The teacher's review queue (`/teacher`), read whole: one page of candidates waiting for review
 * with the filters applied, and the attempts of one issue (issue 26) shown once — at the place of
 * their first attempt in the queue — with their comparison.
 */
import type { Actor } from "../../contract/actor";
import { listReviewQueue, type TReviewQueueItem, type TReviewQueueQuery } from "../../review/list-review-queue";
import { readAttemptComparison, type TAttemptComparison } from "../../review/read-attempt-comparison";
import { assertMayRead, type TPageDeps } from "../page-deps";

export type TReviewQueueEntry =
  { kind: "task"; item: TReviewQueueItem } | { kind: "group"; item: TReviewQueueItem; comparison: TAttemptComparison };

export async function readReviewQueuePage(deps: TPageDeps, input: TReviewQueueQuery & { actor: Actor }) {
  const { actor, ...query } = input;
  assertMayRead(actor, "review.view");
  const { db } = deps;
  const queue = await listReviewQueue({ db }, query);
  const entries: TReviewQueueEntry[] = [];
  const seenGroups = new Set<string>();
  for (const item of queue.items) {
    if (!item.attemptGroupId) entries.push({ kind: "task", item });
    else if (!seenGroups.has(item.attemptGroupId)) {
      seenGroups.add(item.attemptGroupId);
      const comparison = await readAttemptComparison(
        { db, dataDir: deps.env.dataDir },
        { groupId: item.attemptGroupId },
      );
      entries.push({ kind: "group", item, comparison });
    }
  }
  return { queue, entries, isFiltered: Boolean(queue.query.repository) || queue.query.rounds !== "all" };
}

export type TReviewQueuePage = Awaited<ReturnType<typeof readReviewQueuePage>>;
