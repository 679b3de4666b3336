/**
 * How much of a diff is rendered when. A 10,000-line diff is ~100,000 DOM nodes; committing them
 * in one go blocks the main thread for seconds. So the first render (server and hydration alike,
 * the two must agree) holds the file list, every file header and the bodies of the first files up
 * to INITIAL_LINE_BUDGET lines; the rest follow in background stages of about CHUNK_LINE_BUDGET
 * lines each, one React transition per stage, so input stays responsive in between. Large files
 * are never rendered on their own; the teacher opens them. Past AUTO_LINE_LIMIT lines nothing more
 * renders by itself either: a page of hundreds of thousands of rows is slower to use than a click.
 */
import type { TDiffFile } from "@/lib/review/read-candidate-diff.schema";

export const INITIAL_LINE_BUDGET = 1_000;
export const CHUNK_LINE_BUDGET = 500;
export const AUTO_LINE_LIMIT = 20_000;

type TBudgets = { initialLines: number; chunkLines: number; autoLines: number };
const DEFAULT_BUDGETS: TBudgets = { initialLines: INITIAL_LINE_BUDGET, chunkLines: CHUNK_LINE_BUDGET, autoLines: AUTO_LINE_LIMIT };

/** `stageOf[i]`: the stage at which file i's body appears by itself; -1 = only on request. */
export type TRenderPlan = { stageOf: readonly number[]; stageCount: number };

export function lineCountOf(file: TDiffFile): number {
  let count = 0;
  for (const hunk of file.hunks) count += hunk.lines.length + 1;
  return count;
}

export function planProgressiveRender(files: readonly TDiffFile[], budgets: TBudgets = DEFAULT_BUDGETS): TRenderPlan {
  const stageOf: number[] = [];
  let stage = 0;
  let used = 0;
  let budget = budgets.initialLines;
  let autoUsed = 0;
  // Once one file is left to a click for the overall limit, so is every later one: "from here on,
  // open what you need" is easier to follow than gaps.
  let isAutoExhausted = false;
  for (const file of files) {
    const lines = lineCountOf(file);
    if (lines > 0 && !file.isLarge && autoUsed + lines > budgets.autoLines) isAutoExhausted = true;
    if (file.isLarge || (lines > 0 && isAutoExhausted)) {
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
    autoUsed += lines;
  }
  return { stageOf, stageCount: stage + 1 };
}

/** Pixel height a file section will roughly take, so off-screen sections hold their place (content-visibility). */
export function estimateSectionHeight(file: TDiffFile, isBodyShown: boolean): number {
  const header = 44;
  if (!isBodyShown || file.hunks.length === 0) return header + 40;
  return header + lineCountOf(file) * 18;
}
