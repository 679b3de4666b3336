/**
 * Find-in-diff. The browser's own find (Ctrl+F) sees only the rows a virtualized list has
 * rendered, so the review page searches the diff data itself: every shown line of every file,
 * case-insensitive, in what the teacher reads (display markers included). Matches are kept as
 * (file, hunk, line, start, end) so they survive a layout switch; the view maps them to rows.
 *
 * The scan runs in slices of at most SLICE_MS (one macrotask each), so typing stays responsive
 * on a 100,000-line diff, and it follows the lines as they arrive (it never misses one: it waits
 * at the last line there is and goes on from there).
 */
import type { TDiffFile } from "@/lib/review/read-candidate-diff.schema";

export type TSearchMatch = { file: number; hunk: number; line: number; start: number; end: number };

/** Lines scanned between two looks at the clock; a slice runs for SLICE_MS at most (one macrotask). */
export const SLICE_LINES = 2_000;
export const SLICE_MS = 8;
/** Beyond this many matches the count says "more than"; stepping covers the first ones. */
export const MAX_MATCHES = 50_000;

/** The next line to scan, and how many lines were scanned before it (its ordinal in the diff). */
export type TSearchCursor = { file: number; hunk: number; line: number; ordinal: number };

export const SEARCH_START: TSearchCursor = { file: 0, hunk: 0, line: 0, ordinal: 0 };

/**
 * Scans from `cursor` for at most `maxLines` lines; returns where to go on, or null when the
 * diff is done (or MAX_MATCHES is reached). Lines arrive in chunks (diff-chunks.ts): the scan
 * stops at `arrivedLines` (the number of lines there are so far) and returns a cursor at that
 * ordinal, which stays valid when more lines arrive — even in the middle of a hunk.
 */
export function searchSlice(
  files: readonly TDiffFile[],
  query: string,
  cursor: TSearchCursor,
  maxLines: number,
  into: TSearchMatch[],
  arrivedLines: number = Number.POSITIVE_INFINITY,
): TSearchCursor | null {
  const needle = query.toLowerCase();
  let { file, hunk, line, ordinal } = cursor;
  for (let scanned = 0; scanned < maxLines; scanned++) {
    if (ordinal >= arrivedLines) break;
    // Move to the next line that exists (past ended hunks, files without lines).
    let hunks = file < files.length && !files[file]!.isBinary ? files[file]!.hunks : [];
    while (file < files.length && (hunk >= hunks.length || line >= hunks[hunk]!.lines.length)) {
      if (hunk < hunks.length) {
        hunk++;
        line = 0;
      } else {
        file++;
        hunk = 0;
        line = 0;
        hunks = file < files.length && !files[file]!.isBinary ? files[file]!.hunks : [];
      }
    }
    if (file >= files.length) return null;
    const original = hunks[hunk]!.lines[line]!.text;
    // Lower-casing may change a line's length (rare letters such as U+0130): then compare as
    // written, so match offsets always point into the text shown.
    const lower = original.toLowerCase();
    const text = lower.length === original.length ? lower : original;
    for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) {
      if (into.length >= MAX_MATCHES) return null;
      into.push({ file, hunk, line, start: at, end: at + needle.length });
    }
    line++;
    ordinal++;
  }
  return { file, hunk, line, ordinal };
}

/** Ranges of matches per line, for the rows that render them: key `${file}:${hunk}:${line}`. */
export function indexMatches(matches: readonly TSearchMatch[]): Map<string, number[]> {
  const byLine = new Map<string, number[]>();
  matches.forEach((match, i) => {
    const key = `${match.file}:${match.hunk}:${match.line}`;
    const list = byLine.get(key);
    if (list) list.push(i);
    else byLine.set(key, [i]);
  });
  return byLine;
}
