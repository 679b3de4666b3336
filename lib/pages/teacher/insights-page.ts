/**
 * The teacher's insights (`/teacher/insights`), read whole: approval rates, rounds to approval and
 * cost per approved pull request over the chosen window, by repository and by agent.
 */
import type { z } from "zod";
import type { Actor } from "../../contract/actor";
import { readReviewInsights, type ZInsightsQuerySchema } from "../../review/read-review-insights";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readInsightsPage(
  deps: TPageDeps & { now?: () => Date },
  input: z.input<typeof ZInsightsQuerySchema> & { actor: Actor },
) {
  const { actor, ...query } = input;
  assertMayRead(actor, "review.view");
  return readReviewInsights({ db: deps.db, now: deps.now }, query);
}

export type TInsightsPage = Awaited<ReturnType<typeof readInsightsPage>>;
