/**
 * The review page's diff in pieces (issue 16). A 100,000-line diff is ~13 MB of JSON: embedded
 * whole in the page's payload it is parsed and hydrated in one main-thread task of over a second.
 * So the page sends an OUTLINE (totals, notes, every file's metadata with its hunk and line
 * counts, no lines) and the FIRST CHUNK of lines; the browser fetches the other chunks in order
 * from the chunk route, each small enough to parse in a few milliseconds.
 *
 * A chunk is a run of consecutive lines over the whole diff (in file, hunk, line order), cut by a
 * line and a character budget, so even one 100,000-line file arrives in small pieces. Each piece
 * names its file, hunk and first line; a piece that starts a hunk carries the hunk header. The
 * plan is a pure function of the diff, so the page and the chunk route cut the same diff the same
 * way. The content keeps the guarantees of TCandidateDiff: display-safe, untrusted, text only.
 */
import { z } from "zod";
import {
  ZCandidateDiffSchema,
  ZDiffFileSchema,
  ZDiffLineSchema,
  type TCandidateDiff,
  type TDiffFile,
  type TDiffLine,
} from "./read-candidate-diff.schema";

export const ZDiffFileOutlineSchema = ZDiffFileSchema.omit({ hunks: true })
  .extend({
    /** Hunks of the file in the diff (all of them arrive in chunks). */
    hunkCount: z.number().int().nonnegative(),
    /** Lines of the file in the diff (context, added, deleted; not hunk headers). */
    lineCount: z.number().int().nonnegative(),
  })
  .strict();

export const ZDiffOutlineSchema = ZCandidateDiffSchema.omit({ files: true })
  .extend({
    files: z.array(ZDiffFileOutlineSchema),
    /** Chunks the lines come in; chunk 0 is sent with the page. */
    chunkCount: z.number().int().positive(),
  })
  .strict();

export const ZDiffPieceSchema = z
  .object({
    file: z.number().int().nonnegative(),
    hunk: z.number().int().nonnegative(),
    /** Index in the hunk of the piece's first line; 0 = the piece starts the hunk. */
    start: z.number().int().nonnegative(),
    /** The hunk header, present exactly when `start` is 0. */
    header: z.string().optional(),
    lines: z.array(ZDiffLineSchema).min(1),
  })
  .strict();

export const ZDiffChunkSchema = z
  .object({
    index: z.number().int().nonnegative(),
    /** The plan's chunk count, so a client notices a diff that is not the one its outline describes. */
    count: z.number().int().positive(),
    pieces: z.array(ZDiffPieceSchema),
  })
  .strict();

export type TDiffFileOutline = z.infer<typeof ZDiffFileOutlineSchema>;
export type TDiffOutline = z.infer<typeof ZDiffOutlineSchema>;
export type TDiffPiece = z.infer<typeof ZDiffPieceSchema>;
export type TDiffChunk = z.infer<typeof ZDiffChunkSchema>;
/** What the review page hands the client DiffView: the outline and the first chunk of lines. */
export type TDiffPage = { outline: TDiffOutline; first: TDiffChunk };

type TBudget = { maxLines: number; maxChars: number };
export type TDiffChunkBudgets = { first: TBudget; rest: TBudget };

/**
 * The first chunk fills a first screen or two and keeps the page's payload small (first rows
 * ≤ 1 s); later chunks are ~0.5 MB of JSON at most, parsed in a few ms on a slow machine.
 */
export const DIFF_CHUNK_BUDGETS: TDiffChunkBudgets = {
  first: { maxLines: 1_500, maxChars: 192 * 1024 },
  rest: { maxLines: 5_000, maxChars: 512 * 1024 },
};

/** JSON characters a line costs besides its text (`{"kind":"add","oldNumber":…}`). */
const LINE_OVERHEAD_CHARS = 64;

type TCursor = { file: number; hunk: number; line: number };
/** Where each chunk starts; the last chunk runs to the end of the diff. */
export type TDiffChunkPlan = { starts: TCursor[] };

const costOf = (line: TDiffLine) => line.text.length + LINE_OVERHEAD_CHARS;

/** Lines a file shows (a binary file's hunks are never sent: git printed none, and the view shows none). */
function hunksOf(file: TDiffFile) {
  return file.isBinary ? [] : file.hunks;
}

export function planDiffChunks(diff: TCandidateDiff, budgets: TDiffChunkBudgets = DIFF_CHUNK_BUDGETS): TDiffChunkPlan {
  const starts: TCursor[] = [{ file: 0, hunk: 0, line: 0 }];
  let budget = budgets.first;
  let lines = 0;
  let chars = 0;
  diff.files.forEach((file, f) => {
    hunksOf(file).forEach((hunk, h) => {
      const headerCost = hunk.header.length + LINE_OVERHEAD_CHARS;
      hunk.lines.forEach((line, l) => {
        const cost = costOf(line) + (l === 0 ? headerCost : 0);
        // A chunk holds at least one line, so the plan always moves on.
        if (lines > 0 && (lines + 1 > budget.maxLines || chars + cost > budget.maxChars)) {
          starts.push({ file: f, hunk: h, line: l });
          budget = budgets.rest;
          lines = 0;
          chars = 0;
        }
        lines++;
        chars += cost;
      });
    });
  });
  return { starts };
}

/** Chunk `index` of the plan: the lines from its start up to the next chunk's start. */
export function sliceDiffChunk(diff: TCandidateDiff, plan: TDiffChunkPlan, index: number): TDiffChunk {
  const from = plan.starts[index];
  if (!from) throw new RangeError(`no chunk ${index} in a plan of ${plan.starts.length}`);
  const to = plan.starts[index + 1] ?? { file: diff.files.length, hunk: 0, line: 0 };
  const pieces: TDiffPiece[] = [];
  for (let f = from.file; f < diff.files.length && f <= to.file; f++) {
    const hunks = hunksOf(diff.files[f]!);
    for (let h = f === from.file ? from.hunk : 0; h < hunks.length; h++) {
      if (f === to.file && h > to.hunk) break;
      const hunk = hunks[h]!;
      const start = f === from.file && h === from.hunk ? from.line : 0;
      const end = f === to.file && h === to.hunk ? to.line : hunk.lines.length;
      if (end <= start) continue;
      pieces.push({
        file: f,
        hunk: h,
        start,
        ...(start === 0 ? { header: hunk.header } : {}),
        lines: hunk.lines.slice(start, end),
      });
    }
  }
  return { index, count: plan.starts.length, pieces };
}

/** The diff without its lines: what the page sends besides the first chunk. */
export function outlineOf(diff: TCandidateDiff, plan: TDiffChunkPlan): TDiffOutline {
  const { files, ...rest } = diff;
  return {
    ...rest,
    files: files.map(({ hunks: _hunks, ...file }) => {
      const shown = hunksOf({ ...file, hunks: _hunks });
      return { ...file, hunkCount: shown.length, lineCount: shown.reduce((n, h) => n + h.lines.length, 0) };
    }),
    chunkCount: plan.starts.length,
  };
}

/** The page's part of a diff: its outline and chunk 0. */
export function toDiffPage(diff: TCandidateDiff, plan: TDiffChunkPlan = planDiffChunks(diff)): TDiffPage {
  return { outline: outlineOf(diff, plan), first: sliceDiffChunk(diff, plan, 0) };
}
