/**
 * How much of a diff is rendered when. A 10,000-line diff is ~100,000 DOM nodes; committing them
 * in one go blocks the main thread for seconds. So the first render (server and hydration alike,
 * the two must agree) holds the file list, every file header and the bodies of the first files up
 * to INITIAL_LINE_BUDGET lines; the rest follow in background stages of about CHUNK_LINE_BUDGET
 * lines each, one React transition per stage, so input stays responsive in between. Large files
 * are never rendered on their own; the teacher opens them.
 */
import type { TDiffFile } from "@/lib/review/read-candidate-diff.schema";

export const INITIAL_LINE_BUDGET = 1_000;
export const CHUNK_LINE_BUDGET = 500;

/** `stageOf[i]`: the stage at which file i's body appears by itself; -1 = only on request. */
export type TRenderPlan = { stageOf: readonly number[]; stageCount: number };

export function lineCountOf(file: TDiffFile): number {
  let count = 0;
  for (const hunk of file.hunks) count += hunk.lines.length + 1;
  return count;
}

export function planProgressiveRender(files: readonly TDiffFile[], budgets: { initialLines: number; chunkLines: number } = { initialLines: INITIAL_LINE_BUDGET, chunkLines: CHUNK_LINE_BUDGET }): TRenderPlan {
  const stageOf: number[] = [];
  let stage = 0;
  let used = 0;
  let budget = budgets.initialLines;
  for (const file of files) {
    const lines = lineCountOf(file);
    if (file.isLarge) {
      stageOf.push(-1);
      continue;
    }
    // Bodies without lines (binary, mode-only, empty) cost nothing: shown from the start.
    if (lines === 0) {
      stageOf.push(0);
      continue;
    }
    if (used > 0 && used + lines > budget) {
      stage++;
      used = 0;
      budget = budgets.chunkLines;
    }
    stageOf.push(stage);
    used += lines;
  }
  return { stageOf, stageCount: stage + 1 };
}

/** Pixel height a file section will roughly take, so off-screen sections hold their place (content-visibility). */
export function estimateSectionHeight(file: TDiffFile, isBodyShown: boolean): number {
  const header = 44;
  if (!isBodyShown || file.hunks.length === 0) return header + 40;
  return header + lineCountOf(file) * 18;
}
