/**
 * readInsightsPage on real PostgreSQL: a decision recorded on a real candidate counts in the
 * chosen window; an operator reads nothing. (The sums themselves: read-review-insights tests.)
 */
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { parseEnv } from "../../env";
import { decideCandidate } from "../../review/decide-candidate";
import { createReviewFixture } from "../../review/testing/review-fixture";
import { createTestDatabase } from "../../testing/test-database";
import { readInsightsPage } from "./insights-page";

describe("readInsightsPage (the teacher's insights, one view model)", async () => {
  const { db } = await createTestDatabase();
  const f = await createReviewFixture(db, { base: { "a.txt": "1\n" }, head: { "a.txt": "2\n" } });
  afterAll(async () => f.diff.cleanup());
  const deps = { db, env: parseEnv({ DATA_DIR: f.diff.dataDir }) };

  it("counts a decision of the window by repository", async () => {
    await decideCandidate(
      { db, dataDir: f.diff.dataDir },
      { actor: f.reviewer, ...f.tuple, verdict: "reject", comment: "not this way" },
    );
    const insights = await readInsightsPage(deps, { actor: f.reviewer, days: "30" });
    expect(insights.byRepository.find((row) => row.key === f.diff.repository)).toMatchObject({ decided: 1 });
  });

  it("is NOT_FOUND for an actor without review.view", async () => {
    await expect(
      readInsightsPage(deps, { actor: { userId: randomUUID(), email: "op@school.invalid", roles: ["operator"] } }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
