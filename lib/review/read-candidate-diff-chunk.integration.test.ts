import { afterAll, describe, expect, it } from "vitest";
import { createTestDatabase } from "../testing/test-database";
import { planDiffChunks, sliceDiffChunk, toDiffPage } from "./diff-chunks";
import { readCandidateDiff } from "./read-candidate-diff";
import { readCandidateDiffChunk } from "./read-candidate-diff-chunk";
import { createReviewFixture, type TReviewFixture } from "./testing/review-fixture";

describe("readCandidateDiffChunk (the review page's other chunks of lines)", async () => {
  const { db } = await createTestDatabase();
  const fixtures: TReviewFixture[] = [];
  afterAll(async () => {
    await Promise.all(fixtures.map((f) => f.diff.cleanup()));
  });
  // 6,000 changed lines in 3 files: more than the page's first chunk, so the browser fetches the rest.
  const bigFile = (seed: string) =>
    Array.from({ length: 2_000 }, (_, i) => `${seed} line ${i} <b>&amp;</b>`).join("\n") + "\n";
  async function fixture(seed = ""): Promise<TReviewFixture> {
    const created = await createReviewFixture(db, {
      base: { "README.md": "base\n" },
      head: {
        "README.md": "base\n",
        "src/a.ts": bigFile(`a${seed}`),
        "src/b.ts": bigFile("b"),
        "src/c.ts": bigFile("c"),
      },
    });
    fixtures.push(created);
    return created;
  }

  it("serves every chunk after the page's first, and together they are the diff git reads, line for line", async () => {
    const f = await fixture();
    const input = { candidateId: f.candidateId, headSha: f.diff.headSha, leftSha: f.diff.baseSha };
    const diff = await readCandidateDiff(
      { dataDir: f.diff.dataDir },
      { repository: f.diff.repository, baseSha: f.diff.baseSha, headSha: f.diff.headSha },
    );
    const plan = planDiffChunks(diff);
    const page = toDiffPage(diff, plan);
    expect(page.outline.chunkCount).toBeGreaterThan(1);
    const lines = [...page.first.pieces];
    for (let index = 1; index < page.outline.chunkCount; index++) {
      const chunk = await readCandidateDiffChunk({ db, dataDir: f.diff.dataDir }, { ...input, index });
      expect(chunk).toEqual(sliceDiffChunk(diff, plan, index));
      lines.push(...chunk.pieces);
    }
    expect(lines.reduce((n, p) => n + p.lines.length, 0)).toBe(6_000);
    await expect(
      readCandidateDiffChunk({ db, dataDir: f.diff.dataDir }, { ...input, index: page.outline.chunkCount }),
    ).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
  });

  it("is bound to the candidate's head and its own diffs: another head, another left side, another candidate are refused", async () => {
    const f = await fixture();
    const g = await fixture("g");
    const deps = { db, dataDir: f.diff.dataDir };
    const input = { candidateId: f.candidateId, headSha: f.diff.headSha, leftSha: f.diff.baseSha, index: 1 };
    await expect(readCandidateDiffChunk(deps, { ...input, headSha: g.diff.headSha })).rejects.toMatchObject({
      code: "REVIEW_STALE",
    });
    await expect(readCandidateDiffChunk(deps, { ...input, leftSha: "f".repeat(40) })).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });
    await expect(
      readCandidateDiffChunk(deps, { ...input, candidateId: `cand_${"0".repeat(32)}` }),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(readCandidateDiffChunk(deps, { ...input, candidateId: "../etc" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    // A candidate whose task has not reached review is not there for a teacher (as on the page).
    await db.task.update({ where: { id: f.taskId }, data: { state: "verifying" } });
    await expect(readCandidateDiffChunk(deps, input)).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
