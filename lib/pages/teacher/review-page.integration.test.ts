/**
 * readReviewPage on real PostgreSQL and a real candidate repository (the review fixture): the
 * review page's whole view model from one call — the diff's first chunk, the comments drawn at
 * their lines, what the decision form may offer — an unreadable diff blocking approval, and
 * nothing for an actor who may not review.
 */
import { randomUUID } from "node:crypto";
import { rm } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import type { Actor } from "../../contract/actor";
import { parseEnv } from "../../env";
import { addLineComment } from "../../review/add-line-comment";
import { createReviewFixture, type TReviewFixture } from "../../review/testing/review-fixture";
import { createTestDatabase } from "../../testing/test-database";
import type { TPageDeps } from "../page-deps";
import { readReviewPage } from "./review-page";

describe("readReviewPage (the teacher's review page, one view model)", async () => {
  const { db } = await createTestDatabase();
  const fixtures: TReviewFixture[] = [];
  afterAll(async () => {
    await Promise.all(fixtures.map((f) => f.diff.cleanup()));
  });
  async function fixture(): Promise<{ f: TReviewFixture; deps: TPageDeps }> {
    const f = await createReviewFixture(db, {
      base: { "a.txt": "one\ntwo\n" },
      head: { "a.txt": "one\n2\n", "b.txt": "new\n" },
    });
    fixtures.push(f);
    return { f, deps: { db, env: parseEnv({ DATA_DIR: f.diff.dataDir }) } };
  }

  it("reads a candidate open for review: the diff's first chunk, its comments at their lines, approval allowed", async () => {
    const { f, deps } = await fixture();
    await addLineComment(
      { db, dataDir: f.diff.dataDir },
      {
        actor: f.reviewer,
        candidateId: f.candidateId,
        path: "a.txt",
        side: "new",
        line: 2,
        lineSha: f.diff.headSha,
        body: "why 2?",
      },
    );
    const page = await readReviewPage(deps, { actor: f.reviewer, candidateId: f.candidateId });
    expect(page.candidate.id).toBe(f.candidateId);
    expect(page.task.id).toBe(f.taskId);
    expect(page.showInterdiff).toBe(false);
    expect(page.leftSha).toBe(f.diff.baseSha);
    if ("unreadable" in page.shownDiff) throw new Error(`diff unreadable: ${page.shownDiff.unreadable}`);
    expect(page.shownDiff.page.outline.files.map((file) => file.path).sort()).toEqual(["a.txt", "b.txt"]);
    expect(page.inlineComments).toEqual([
      expect.objectContaining({
        path: "a.txt",
        side: "new",
        line: 2,
        body: "why 2?",
        round: 1,
        isFromEarlierRound: false,
      }),
    ]);
    expect(page.lineComments).toHaveLength(1);
    expect(page).toMatchObject({
      isOpenForReview: true,
      canApprove: true,
      approveBlockedReason: null,
      canRequestChanges: true,
      notShown: null,
      decision: null,
    });
  });

  it("shows a diff that cannot be read as such, and blocks approval", async () => {
    const { f, deps } = await fixture();
    // The candidate repository is gone (a restore without it, a damaged disk): git cannot read the diff.
    await rm(f.diff.gitDir, { recursive: true, force: true });
    const page = await readReviewPage(deps, { actor: f.reviewer, candidateId: f.candidateId });
    expect(page.shownDiff).toEqual({ unreadable: expect.any(String) });
    expect(page.canApprove).toBe(false);
    expect(page.approveBlockedReason).toBe("the diff cannot be read");
  });

  it("is NOT_FOUND for an unknown candidate and for an actor without review.view", async () => {
    const { f, deps } = await fixture();
    const operator: Actor = { userId: randomUUID(), email: "op@school.invalid", roles: ["operator"] };
    await expect(readReviewPage(deps, { actor: operator, candidateId: f.candidateId })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(
      readReviewPage(deps, { actor: f.reviewer, candidateId: `cand_${"0".repeat(32)}` }),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});
