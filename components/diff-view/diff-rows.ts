/**
 * The diff as one flat list of rows, which is what the virtualized view renders a window of:
 * a header row per file (heading, counts, notes, its Show/Hide button), a row per hunk header,
 * and one row per line (unified) or per side-by-side pair (split). Pure and cheap (linear in the
 * number of lines shown; no strings built), so rebuilding it on a layout switch or when a file
 * is opened costs milliseconds even at 100,000 lines.
 *
 * `rowOfLine` maps a line of the diff (file, hunk, line) to its row, so a search match or a tree
 * jump can scroll to it whatever the layout.
 */
import type { TDiffFile, TDiffLine } from "@/lib/review/read-candidate-diff.schema";

export type TViewMode = "unified" | "split";

export type TDiffRow =
  | { type: "file"; file: number }
  | { type: "hunk"; file: number; hunk: number }
  | { type: "line"; file: number; hunk: number; line: number }
  /** Split view: indexes into the hunk's lines; -1 = that side is empty on this row. */
  | { type: "pair"; file: number; hunk: number; left: number; right: number }
  /** A shown file whose lines were cut by a budget says so after its last line. */
  | { type: "cut"; file: number };

export type TDiffRows = {
  rows: TDiffRow[];
  /** Row of each file's header. */
  fileRow: Int32Array;
  /**
   * A number per row that names the same row in every build of this diff (so measured heights
   * stay with their row when a file is opened or hidden), cheap to look up: the virtualizer asks
   * for keys of all rows each time a height changes, which strings would make slow at 100,000.
   */
  keys: Float64Array;
  rowOfLine: (file: number, hunk: number, line: number) => number | null;
};

export function hasLines(file: TDiffFile): boolean {
  return file.hunks.length > 0 && !file.isBinary;
}

export function lineCountOf(file: TDiffFile): number {
  let count = 0;
  for (const hunk of file.hunks) count += hunk.lines.length + 1;
  return count;
}

type TSplitRow = { left: number | null; right: number | null };

/** Pairs a run of deleted lines with the added lines that follow it; context lines sit on both sides. */
export function pairSplitRows(lines: readonly TDiffLine[]): TSplitRow[] {
  const rows: TSplitRow[] = [];
  let dels: number[] = [];
  let adds: number[] = [];
  const flush = () => {
    for (let i = 0; i < Math.max(dels.length, adds.length); i++) rows.push({ left: dels[i] ?? null, right: adds[i] ?? null });
    dels = [];
    adds = [];
  };
  lines.forEach((line, index) => {
    if (line.kind === "context") {
      flush();
      rows.push({ left: index, right: index });
    } else if (line.kind === "del") {
      if (adds.length > 0) flush();
      dels.push(index);
    } else {
      adds.push(index);
    }
  });
  flush();
  return rows;
}

export function buildDiffRows(files: readonly TDiffFile[], isOpen: (index: number) => boolean, viewMode: TViewMode): TDiffRows {
  const rows: TDiffRow[] = [];
  const keyList: number[] = [];
  const fileRow = new Int32Array(files.length);
  // Ordinals of lines and hunks over the whole diff (open or not), for the row keys.
  let lineOrdinal = 0;
  let hunkOrdinal = 0;
  const mode = viewMode === "unified" ? 0 : 1;
  /** [file][hunk] → row of the hunk header; per-line offsets for split view. */
  const hunkRow: (Int32Array | null)[] = [];
  const pairOffset: (Int32Array[] | null)[] = [];
  files.forEach((file, f) => {
    fileRow[f] = rows.length;
    rows.push({ type: "file", file: f });
    keyList.push(f * 8 + 2);
    if (!hasLines(file) || !isOpen(f)) {
      for (const hunk of file.hunks) lineOrdinal += hunk.lines.length;
      hunkOrdinal += file.hunks.length;
      hunkRow.push(null);
      pairOffset.push(null);
      return;
    }
    const starts = new Int32Array(file.hunks.length);
    const offsets: Int32Array[] = [];
    file.hunks.forEach((hunk, h) => {
      starts[h] = rows.length;
      rows.push({ type: "hunk", file: f, hunk: h });
      keyList.push(hunkOrdinal++ * 8 + 3);
      const firstLine = lineOrdinal;
      lineOrdinal += hunk.lines.length;
      if (viewMode === "unified") {
        for (let l = 0; l < hunk.lines.length; l++) {
          rows.push({ type: "line", file: f, hunk: h, line: l });
          keyList.push((firstLine + l) * 8 + 4);
        }
        return;
      }
      const offset = new Int32Array(hunk.lines.length);
      pairSplitRows(hunk.lines).forEach((pair, r) => {
        if (pair.left !== null) offset[pair.left] = r + 1;
        if (pair.right !== null) offset[pair.right] = r + 1;
        rows.push({ type: "pair", file: f, hunk: h, left: pair.left ?? -1, right: pair.right ?? -1 });
        keyList.push((firstLine + (pair.left ?? pair.right!)) * 8 + 5);
      });
      offsets.push(offset);
    });
    hunkRow.push(starts);
    pairOffset.push(viewMode === "split" ? offsets : null);
    if (file.isTruncated) {
      rows.push({ type: "cut", file: f });
      keyList.push(f * 8 + 6 + mode);
    }
  });
  const rowOfLine = (file: number, hunk: number, line: number): number | null => {
    const start = hunkRow[file]?.[hunk];
    if (start === undefined) return null;
    const offsets = pairOffset[file];
    return start + (offsets ? offsets[hunk]![line]! : line + 1);
  };
  return { rows, fileRow, keys: Float64Array.from(keyList), rowOfLine };
}

/** First guess of a row's height in pixels (18 px code lines); the view measures the real one. */
export function estimateRowHeight(row: TDiffRow, files: readonly TDiffFile[]): number {
  if (row.type === "line" || row.type === "pair") return 18;
  if (row.type === "hunk") return 22;
  if (row.type === "cut") return 26;
  const file = files[row.file]!;
  return 52 + (file.controlCharacterCount > 0 ? 26 : 0) + (hasLines(file) ? 0 : 40);
}
