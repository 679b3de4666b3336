/**
 * Find-in-diff. The browser's own find (Ctrl+F) sees only the rows a virtualized list has
 * rendered, so the review page searches the diff data itself: every shown line of every file,
 * case-insensitive, in what the teacher reads (display markers included). Matches are kept as
 * (file, hunk, line, start, end) so they survive a layout switch; the view maps them to rows.
 *
 * The scan runs in slices of SLICE_LINES lines (one macrotask each), so typing stays responsive
 * on a 100,000-line diff.
 */
import type { TDiffFile } from "@/lib/review/read-candidate-diff.schema";

export type TSearchMatch = { file: number; hunk: number; line: number; start: number; end: number };

export const SLICE_LINES = 20_000;
/** Beyond this many matches the count says "more than"; stepping covers the first ones. */
export const MAX_MATCHES = 50_000;

export type TSearchCursor = { file: number; hunk: number; line: number };

/**
 * Scans from `cursor` for at most `maxLines` lines; returns the matches found and where to go on
 * (null when the diff is done).
 */
export function searchSlice(
  files: readonly TDiffFile[],
  query: string,
  cursor: TSearchCursor,
  maxLines: number,
  into: TSearchMatch[],
): TSearchCursor | null {
  const needle = query.toLowerCase();
  let { file, hunk, line } = cursor;
  let scanned = 0;
  for (; file < files.length; file++, hunk = 0, line = 0) {
    const hunks = files[file]!.isBinary ? [] : files[file]!.hunks;
    for (; hunk < hunks.length; hunk++, line = 0) {
      const lines = hunks[hunk]!.lines;
      for (; line < lines.length; line++) {
        if (scanned >= maxLines) return { file, hunk, line };
        scanned++;
        const original = lines[line]!.text;
        // Lower-casing may change a line's length (rare letters such as U+0130): then compare as
        // written, so match offsets always point into the text shown.
        const lower = original.toLowerCase();
        const text = lower.length === original.length ? lower : original;
        for (let at = text.indexOf(needle); at >= 0; at = text.indexOf(needle, at + needle.length)) {
          if (into.length >= MAX_MATCHES) return null;
          into.push({ file, hunk, line, start: at, end: at + needle.length });
        }
      }
    }
  }
  return null;
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
