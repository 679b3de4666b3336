/**
 * The diff as one flat list of rows, which is what the virtualized view renders a window of:
 * a header row per file (heading, counts, notes, its Show/Hide button), a row per hunk header,
 * one row per line (unified) or per side-by-side pair (split), and — while a file's lines are
 * still arriving (diff-chunks.ts) — one "pending" row standing in for the rest of that file.
 *
 * Columnar (typed arrays, no object per row): the model is rebuilt when a chunk of lines arrives,
 * a file is opened or the layout switches, and at 100,000 lines an object per row cost 10–40 ms
 * of one main-thread task (measured); integer writes cost a few. `rowAt` makes the object for the
 * few rows on screen.
 *
 * `rowOfLine` maps a line of the diff (file, hunk, line) to its row, so a search match or a tree
 * jump can scroll to it whatever the layout.
 */
import type { TDiffFile, TDiffLine } from "@/lib/review/read-candidate-diff.schema";

export type TViewMode = "unified" | "split";

/**
 * A file as the view holds it: its lines so far. `hunkCount`/`lineCount` are the whole file's
 * (from the outline) while lines are still arriving; absent, the file's hunks are all there.
 */
export type TViewFile = TDiffFile & { hunkCount?: number; lineCount?: number };

export type TDiffRow =
  | { type: "file"; file: number }
  | { type: "hunk"; file: number; hunk: number }
  | { type: "line"; file: number; hunk: number; line: number }
  /** Split view: indexes into the hunk's lines; -1 = that side is empty on this row. */
  | { type: "pair"; file: number; hunk: number; left: number; right: number }
  /** A shown file whose lines were cut by a budget says so after its last line. */
  | { type: "cut"; file: number }
  /** The lines (and hunks) of an open file that have not arrived yet. */
  | { type: "pending"; file: number; lines: number; hunks: number };

const FILE = 0;
const HUNK = 1;
const LINE = 2;
const PAIR = 3;
const CUT = 4;
const PENDING = 5;

export type TDiffRows = {
  count: number;
  rowAt: (index: number) => TDiffRow;
  /** Row of each file's header. */
  fileRow: Int32Array;
  /**
   * A number per row that names the same row in every build of this diff (so measured heights
   * stay with their row when a file is opened or hidden, or more lines arrive), cheap to look
   * up: the virtualizer asks for keys of all rows each time a height changes.
   */
  keys: Float64Array;
  /** First guess of a row's height in pixels (the view measures the real one). */
  estimateSize: (index: number) => number;
  rowOfLine: (file: number, hunk: number, line: number) => number | null;
};

export function hunkCountOf(file: TViewFile): number {
  return file.isBinary ? 0 : (file.hunkCount ?? file.hunks.length);
}

export function hasLines(file: TViewFile): boolean {
  return hunkCountOf(file) > 0;
}

/** Lines of the whole file (not hunk headers), arrived or not. */
export function totalLinesOf(file: TViewFile): number {
  if (file.isBinary) return 0;
  if (file.lineCount !== undefined) return file.lineCount;
  let count = 0;
  for (const hunk of file.hunks) count += hunk.lines.length;
  return count;
}

/** Rows the file's body takes in the unified layout: hunk headers and lines. */
export function lineCountOf(file: TViewFile): number {
  return totalLinesOf(file) + hunkCountOf(file);
}

type TSplitRow = { left: number | null; right: number | null };

/** Pairs a run of deleted lines with the added lines that follow it; context lines sit on both sides. */
export function pairSplitRows(lines: readonly TDiffLine[]): TSplitRow[] {
  const rows: TSplitRow[] = [];
  forEachSplitRow(lines, (left, right) => rows.push({ left: left < 0 ? null : left, right: right < 0 ? null : right }));
  return rows;
}

/** pairSplitRows without an object per row: calls `emit(left, right)` (-1 = empty side) in order. */
function forEachSplitRow(lines: readonly TDiffLine[], emit: (left: number, right: number) => void): void {
  let delStart = -1;
  let delCount = 0;
  let addStart = -1;
  let addCount = 0;
  // Deleted and added lines of one run are consecutive in a hunk, so a run is (start, count).
  const flush = () => {
    for (let i = 0; i < Math.max(delCount, addCount); i++)
      emit(i < delCount ? delStart + i : -1, i < addCount ? addStart + i : -1);
    delCount = 0;
    addCount = 0;
  };
  for (let index = 0; index < lines.length; index++) {
    const kind = lines[index]!.kind;
    if (kind === "context") {
      flush();
      emit(index, index);
    } else if (kind === "del") {
      if (addCount > 0) flush();
      if (delCount === 0) delStart = index;
      delCount++;
    } else {
      if (addCount === 0) addStart = index;
      addCount++;
    }
  }
  flush();
}

export function buildDiffRows(
  files: readonly TViewFile[],
  isOpen: (index: number) => boolean,
  viewMode: TViewMode,
): TDiffRows {
  // Capacity: every row the diff could have (a file header, a cut and a pending row per file,
  // every hunk header and every arrived line); split rows never outnumber lines.
  let capacity = 0;
  for (const file of files) {
    capacity += 3 + file.hunks.length;
    for (const hunk of file.hunks) capacity += hunk.lines.length;
  }
  const kind = new Uint8Array(capacity);
  const fileOf = new Int32Array(capacity);
  const a = new Int32Array(capacity);
  const b = new Int32Array(capacity);
  const c = new Int32Array(capacity);
  const keys = new Float64Array(capacity);
  const fileRow = new Int32Array(files.length);
  const hunkRow: (Int32Array | null)[] = new Array<Int32Array | null>(files.length).fill(null);
  // Split layout: the row (counted from its hunk's header) of each arrived line of the file, at
  // the line's position among the file's arrived lines (`hunkLine` says where each hunk starts).
  const pairOffset: (Int32Array | null)[] = new Array<Int32Array | null>(files.length).fill(null);
  const hunkLine: (Int32Array | null)[] = new Array<Int32Array | null>(files.length).fill(null);
  // Written inline, no closure per hunk or per row: at 100,000 lines this loop runs on every chunk
  // that arrives and on every layout switch, inside one React render (71 ms for the split layout
  // with a callback per pair, measured on a loaded 2-core machine).
  let n = 0;
  // Ordinals of lines and hunks over the whole diff (open or not, arrived or not), for the row keys.
  let lineOrdinal = 0;
  let hunkOrdinal = 0;
  const isSplit = viewMode === "split";
  const mode = isSplit ? 1 : 0;
  for (let f = 0; f < files.length; f++) {
    const file = files[f]!;
    const fileLines = totalLinesOf(file);
    const fileHunks = hunkCountOf(file);
    const nextLineOrdinal = lineOrdinal + fileLines;
    const nextHunkOrdinal = hunkOrdinal + fileHunks;
    fileRow[f] = n;
    kind[n] = FILE;
    fileOf[n] = f;
    keys[n] = f * 8 + 2;
    n++;
    if (!hasLines(file) || !isOpen(f)) {
      lineOrdinal = nextLineOrdinal;
      hunkOrdinal = nextHunkOrdinal;
      continue;
    }
    const hunks = file.hunks;
    const starts = new Int32Array(hunks.length);
    let arrived = 0;
    for (const hunk of hunks) arrived += hunk.lines.length;
    const offsets = isSplit ? new Int32Array(arrived) : null;
    const firstLines = isSplit ? new Int32Array(hunks.length) : null;
    let fileLine = 0;
    for (let h = 0; h < hunks.length; h++) {
      const lines = hunks[h]!.lines;
      const count = lines.length;
      starts[h] = n;
      kind[n] = HUNK;
      fileOf[n] = f;
      a[n] = h;
      keys[n] = hunkOrdinal++ * 8 + 3;
      n++;
      const firstLine = lineOrdinal;
      lineOrdinal += count;
      if (!offsets || !firstLines) {
        for (let l = 0; l < count; l++) {
          kind[n] = LINE;
          fileOf[n] = f;
          a[n] = h;
          b[n] = l;
          keys[n] = (firstLine + l) * 8 + 4;
          n++;
        }
        continue;
      }
      // pairSplitRows, inline: a run of deleted lines pairs with the added lines that follow it;
      // a context line sits on both sides. Runs are consecutive in a hunk: (start, count).
      firstLines[h] = fileLine;
      let r = 0;
      let delStart = 0;
      let delCount = 0;
      let addStart = 0;
      let addCount = 0;
      for (let index = 0; index <= count; index++) {
        const lineKind = index < count ? lines[index]!.kind : "context";
        if (lineKind === "del" && addCount === 0) {
          if (delCount === 0) delStart = index;
          delCount++;
          continue;
        }
        if (lineKind === "add") {
          if (addCount === 0) addStart = index;
          addCount++;
          continue;
        }
        // A context line, the end of the hunk, or a deleted line after added ones: the run ends.
        const pairs = delCount > addCount ? delCount : addCount;
        for (let i = 0; i < pairs; i++) {
          const left = i < delCount ? delStart + i : -1;
          const right = i < addCount ? addStart + i : -1;
          r++;
          if (left >= 0) offsets[fileLine + left] = r;
          if (right >= 0) offsets[fileLine + right] = r;
          kind[n] = PAIR;
          fileOf[n] = f;
          a[n] = h;
          b[n] = left;
          c[n] = right;
          keys[n] = (firstLine + (left >= 0 ? left : right)) * 8 + 5;
          n++;
        }
        delCount = 0;
        addCount = 0;
        if (index === count) break;
        if (lineKind === "del") {
          delStart = index;
          delCount = 1;
          continue;
        }
        r++;
        offsets[fileLine + index] = r;
        kind[n] = PAIR;
        fileOf[n] = f;
        a[n] = h;
        b[n] = index;
        c[n] = index;
        keys[n] = (firstLine + index) * 8 + 5;
        n++;
      }
      fileLine += count;
    }
    hunkRow[f] = starts;
    pairOffset[f] = offsets;
    hunkLine[f] = firstLines;
    if (arrived < fileLines) {
      // Keyed by the first line still missing: a new key each time more arrive, so the row is
      // estimated afresh (its height shrinks as lines replace it).
      kind[n] = PENDING;
      fileOf[n] = f;
      a[n] = fileLines - arrived;
      b[n] = fileHunks - hunks.length;
      keys[n] = -((lineOrdinal + 1) * 8 + mode);
      n++;
    } else if (file.isTruncated) {
      kind[n] = CUT;
      fileOf[n] = f;
      keys[n] = f * 8 + 6 + mode;
      n++;
    }
    lineOrdinal = nextLineOrdinal;
    hunkOrdinal = nextHunkOrdinal;
  }

  const rowAt = (i: number): TDiffRow => {
    const file = fileOf[i]!;
    switch (kind[i]) {
      case FILE:
        return { type: "file", file };
      case HUNK:
        return { type: "hunk", file, hunk: a[i]! };
      case LINE:
        return { type: "line", file, hunk: a[i]!, line: b[i]! };
      case PAIR:
        return { type: "pair", file, hunk: a[i]!, left: b[i]!, right: c[i]! };
      case CUT:
        return { type: "cut", file };
      default:
        return { type: "pending", file, lines: a[i]!, hunks: b[i]! };
    }
  };
  const estimateSize = (i: number): number => {
    switch (kind[i]) {
      case LINE:
      case PAIR:
        return 18;
      case HUNK:
        return 22;
      case CUT:
        return 26;
      case PENDING:
        return pendingHeight(a[i]!, b[i]!);
      default: {
        const file = files[fileOf[i]!]!;
        return 52 + (file.controlCharacterCount > 0 ? 26 : 0) + (hasLines(file) ? 0 : 40);
      }
    }
  };
  const rowOfLine = (file: number, hunk: number, line: number): number | null => {
    const start = hunkRow[file]?.[hunk];
    if (start === undefined) return null;
    if (line >= files[file]!.hunks[hunk]!.lines.length) return null;
    const offsets = pairOffset[file];
    const firstLines = hunkLine[file];
    return start + (offsets && firstLines ? offsets[firstLines[hunk]! + line]! : line + 1);
  };
  return { count: n, rowAt, fileRow, keys: keys.subarray(0, n), estimateSize, rowOfLine };
}

/** The pending row is as tall as the lines it stands for (in the unified layout), so the page's height barely moves as they arrive. */
export function pendingHeight(lines: number, hunks: number): number {
  return lines * 18 + hunks * 22;
}

/** First guess of a row's height in pixels (18 px code lines); the view measures the real one. */
export function estimateRowHeight(row: TDiffRow, files: readonly TViewFile[]): number {
  if (row.type === "line" || row.type === "pair") return 18;
  if (row.type === "hunk") return 22;
  if (row.type === "cut") return 26;
  if (row.type === "pending") return pendingHeight(row.lines, row.hunks);
  const file = files[row.file]!;
  return 52 + (file.controlCharacterCount > 0 ? 26 : 0) + (hasLines(file) ? 0 : 40);
}
