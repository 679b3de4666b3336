/**
 * The teacher's review history (`/teacher/history`), read whole: one page of decisions with the
 * filters applied ("mine" is the actor's own). listReviewHistory is the whole view model today;
 * the page still reads it through here so that what it shows grows in one place.
 */
import type { Actor } from "../../contract/actor";
import { listReviewHistory, type TReviewHistoryQuery } from "../../review/list-review-history";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readReviewHistoryPage(deps: TPageDeps, input: TReviewHistoryQuery & { actor: Actor }) {
  assertMayRead(input.actor, "review.view");
  return listReviewHistory({ db: deps.db }, input);
}

export type TReviewHistoryPage = Awaited<ReturnType<typeof readReviewHistoryPage>>;
