/**
 * readReviewHistoryPage on real PostgreSQL: a decision recorded on a real candidate shows in the
 * history, as the actor's own under "mine" and not in another teacher's; an operator reads nothing.
 */
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { parseEnv } from "../../env";
import { decideCandidate } from "../../review/decide-candidate";
import { createReviewFixture } from "../../review/testing/review-fixture";
import { createTestDatabase } from "../../testing/test-database";
import { readReviewHistoryPage } from "./review-history-page";

describe("readReviewHistoryPage (the teacher's history, one view model)", async () => {
  const { db } = await createTestDatabase();
  const f = await createReviewFixture(db, { base: { "a.txt": "1\n" }, head: { "a.txt": "2\n" } });
  afterAll(async () => f.diff.cleanup());
  const deps = { db, env: parseEnv({ DATA_DIR: f.diff.dataDir }) };

  it("lists a recorded decision, as the deciding teacher's own", async () => {
    await decideCandidate(
      { db, dataDir: f.diff.dataDir },
      { actor: f.reviewer, ...f.tuple, verdict: "reject", comment: "not this way" },
    );
    const mine = await readReviewHistoryPage(deps, { actor: f.reviewer, scope: "mine" });
    expect(mine.items.map((i) => [i.taskId, i.isMine])).toEqual([[f.taskId, true]]);
    const theirs = await readReviewHistoryPage(deps, { actor: f.creator, scope: "mine" });
    expect(theirs.items).toEqual([]);
    const all = await readReviewHistoryPage(deps, { actor: f.creator });
    expect(all.items.map((i) => [i.taskId, i.isMine])).toEqual([[f.taskId, false]]);
  });

  it("is NOT_FOUND for an actor without review.view", async () => {
    await expect(
      readReviewHistoryPage(deps, { actor: { userId: randomUUID(), email: "op@school.invalid", roles: ["operator"] } }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
