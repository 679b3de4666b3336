import { describe, expect, it } from "vitest";
import { applyChunk, initialState } from "./use-diff-chunks";
import {
  DIFF_CHUNK_BUDGETS,
  planDiffChunks,
  sliceDiffChunk,
  toDiffPage,
  ZDiffChunkSchema,
  ZDiffOutlineSchema,
  type TDiffChunkBudgets,
} from "@/lib/review/diff-chunks";
import type { TCandidateDiff } from "@/lib/review/read-candidate-diff.schema";
import { buildSyntheticDiff } from "@/lib/review/testing/synthetic-diff";

/** What the browser ends up holding: the outline, chunk 0 from the page, then every other chunk in order. */
function reassemble(diff: TCandidateDiff, budgets?: TDiffChunkBudgets) {
  const plan = planDiffChunks(diff, budgets);
  let state = initialState(toDiffPage(diff, plan), "s");
  for (let i = 1; i < plan.starts.length; i++)
    state = applyChunk(state, sliceDiffChunk(diff, plan, i), plan.starts.length);
  return { plan, state };
}

const linesOf = (diff: TCandidateDiff) =>
  diff.files.reduce((n, f) => n + f.hunks.reduce((m, h) => m + h.lines.length, 0), 0);

describe("diff chunks (the review page's lines in pieces)", () => {
  it("cuts a 100,000-line diff into small chunks that put back together are the diff, exactly", () => {
    const diff = buildSyntheticDiff({ files: 1_000, changedLines: 100_000 });
    const { plan, state } = reassemble(diff);
    expect(state.error).toBeNull();
    expect(state.loaded).toBe(plan.starts.length);
    expect(state.arrivedLines).toBe(linesOf(diff));
    expect(state.files.map(({ hunks }) => hunks)).toEqual(diff.files.map((f) => f.hunks));
    // The page carries the first chunk only; every chunk is valid and within its budget.
    const page = toDiffPage(diff, plan);
    expect(ZDiffOutlineSchema.safeParse(page.outline).success).toBe(true);
    expect(page.first.pieces.reduce((n, p) => n + p.lines.length, 0)).toBeLessThanOrEqual(
      DIFF_CHUNK_BUDGETS.first.maxLines,
    );
    expect(JSON.stringify(page).length).toBeLessThan(
      DIFF_CHUNK_BUDGETS.first.maxChars + JSON.stringify(page.outline).length,
    );
    for (let i = 0; i < plan.starts.length; i++) {
      const chunk = sliceDiffChunk(diff, plan, i);
      expect(ZDiffChunkSchema.safeParse(chunk).success).toBe(true);
      const budget = i === 0 ? DIFF_CHUNK_BUDGETS.first : DIFF_CHUNK_BUDGETS.rest;
      expect(JSON.stringify(chunk).length).toBeLessThanOrEqual(budget.maxChars);
    }
    expect(page.outline.files.reduce((n, f) => n + f.lineCount, 0)).toBe(linesOf(diff));
  });

  it("splits one huge file inside its hunk, and the pieces say where they continue", () => {
    const diff = buildSyntheticDiff({ files: 1, changedLines: 3_000 });
    // One hunk of all the lines, so chunks must cut inside it.
    const file = diff.files[0]!;
    const merged = {
      ...diff,
      files: [{ ...file, hunks: [{ header: "@@ -1 +1 @@", lines: file.hunks.flatMap((h) => h.lines) }] }],
    };
    const budgets = { first: { maxLines: 100, maxChars: 1e9 }, rest: { maxLines: 700, maxChars: 1e9 } };
    const { plan, state } = reassemble(merged, budgets);
    expect(plan.starts.length).toBeGreaterThan(4);
    expect(sliceDiffChunk(merged, plan, 1).pieces[0]).toMatchObject({ file: 0, hunk: 0, start: 100 });
    expect(sliceDiffChunk(merged, plan, 1).pieces[0]!.header).toBeUndefined();
    expect(state.files[0]!.hunks).toEqual(merged.files[0]!.hunks);
  });

  it("refuses a chunk that does not continue the lines held (out of order, or another diff's)", () => {
    const diff = buildSyntheticDiff({ files: 30, changedLines: 3_000 });
    const plan = planDiffChunks(diff, {
      first: { maxLines: 200, maxChars: 1e9 },
      rest: { maxLines: 500, maxChars: 1e9 },
    });
    const start = initialState(toDiffPage(diff, plan), "s");
    expect(() => applyChunk(start, sliceDiffChunk(diff, plan, 2), plan.starts.length)).toThrow(/another version/);
    expect(() => applyChunk(start, { ...sliceDiffChunk(diff, plan, 1), count: 99 }, plan.starts.length)).toThrow(
      /another version/,
    );
    const shifted = {
      ...sliceDiffChunk(diff, plan, 1),
      pieces: sliceDiffChunk(diff, plan, 1).pieces.map((p) => ({ ...p, start: p.start + 1 })),
    };
    expect(() => applyChunk(start, shifted, plan.starts.length)).toThrow(/do not continue/);
  });

  it("sends a diff without lines (binary files only) as one empty chunk", () => {
    const diff = buildSyntheticDiff({ files: 2, changedLines: 10 });
    const binary = { ...diff, files: diff.files.map((f) => ({ ...f, isBinary: true, hunks: [] })) };
    const page = toDiffPage(binary);
    expect(page.outline.chunkCount).toBe(1);
    expect(page.first.pieces).toEqual([]);
    expect(page.outline.files.every((f) => f.lineCount === 0 && f.hunkCount === 0)).toBe(true);
  });
});
