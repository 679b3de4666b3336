/**
 * Highlighting in small slices on the main thread: tokens are computed per block (one side of a
 * hunk, ≤ BLOCK_LINES lines / BLOCK_CHARS characters, a few ms of highlight.js), only for blocks
 * the view asks for (the rows on and near the screen), one block per macrotask, so input and
 * scrolling always get in between and no task comes near the 50 ms long-task line. Until its
 * block is done a line shows as plain (marker-flagged) text.
 *
 * highlight.js itself (highlight.ts, ~80 KB with its grammars) is imported on the first request,
 * so it is a chunk of its own, fetched and evaluated after the page is interactive; a grammar's
 * first use (compiling its regexes, tens of ms) is a task of its own too, never added to a block's.
 *
 * Why not a Web Worker: the slices already keep every task short, the view asks only for what is
 * on screen (a few blocks per scroll), and a worker would need bundler-specific plumbing in Next
 * and in the benchmark harness for no gain in the measured figures.
 *
 * Sides: the old side of a hunk is its context and deleted lines, the new side its context and
 * added lines (a context line is coloured as it reads on the new side), so a comment opened on a
 * deleted line never swallows the added lines after it.
 */
import type { TDiffFile } from "@/lib/review/read-candidate-diff.schema";
import { blockStarts, LOOKBACK_CHARS, LOOKBACK_LINES, type TToken } from "./highlight-tokens";

/** highlight.ts with highlight.js and its grammars: fetched (its own chunk) when the first block is asked for. */
type TEngine = typeof import("./highlight");
let engine: TEngine | null = null;
let engineLoad: Promise<TEngine> | null = null;

type TSide = { lines: number[]; starts: number[]; positionOf: Int32Array };
type THunkSides = { old: TSide; new: TSide };

export class HighlightStore {
  private readonly sides = new Map<string, THunkSides>();
  private readonly blocks = new Map<string, TToken[][]>();
  private queue: { file: number; hunk: number; side: "old" | "new"; block: number }[] = [];
  private handle: ReturnType<typeof setTimeout> | null = null;
  private readonly listeners = new Set<() => void>();
  private version = 0;

  constructor(private files: readonly TDiffFile[]) {}

  /**
   * More lines arrived (diff-chunks.ts): the files as they are now. Lines only ever arrive in
   * order and never change, so every block stays valid; a hunk split across two chunks grows,
   * and its sides and blocks are keyed by its length (`hunkKey`), so a grown hunk is simply
   * highlighted afresh when asked.
   */
  setFiles(files: readonly TDiffFile[]): void {
    this.files = files;
  }

  subscribe = (listener: () => void): (() => void) => {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  };

  getVersion = (): number => this.version;

  /** file:hunk:length — a hunk that grew is another hunk for the caches. */
  private hunkKey(file: number, hunk: number): string {
    return `${file}:${hunk}:${this.files[file]!.hunks[hunk]!.lines.length}`;
  }

  private sidesOf(file: number, hunk: number): THunkSides {
    const key = this.hunkKey(file, hunk);
    let sides = this.sides.get(key);
    if (sides) return sides;
    const lines = this.files[file]!.hunks[hunk]!.lines;
    const make = (kind: "del" | "add"): TSide => {
      const picked: number[] = [];
      const positionOf = new Int32Array(lines.length).fill(-1);
      lines.forEach((line, i) => {
        if (line.kind === "context" || line.kind === kind) {
          positionOf[i] = picked.length;
          picked.push(i);
        }
      });
      return { lines: picked, starts: blockStarts(picked.map((i) => lines[i]!.text)), positionOf };
    };
    sides = { old: make("del"), new: make("add") };
    this.sides.set(key, sides);
    return sides;
  }

  private locate(file: number, hunk: number, line: number): { side: "old" | "new"; block: number; offset: number } {
    const kind = this.files[file]!.hunks[hunk]!.lines[line]!.kind;
    const side = kind === "del" ? "old" : "new";
    const data = this.sidesOf(file, hunk)[side];
    const position = data.positionOf[line]!;
    // Last block start ≤ position (binary search: a 100,000-line new file has ~2,000 blocks).
    let lo = 0;
    let hi = data.starts.length - 1;
    while (lo < hi) {
      const mid = (lo + hi + 1) >> 1;
      if (data.starts[mid]! <= position) lo = mid;
      else hi = mid - 1;
    }
    return { side, block: lo, offset: position - data.starts[lo]! };
  }

  /** Tokens of a line when its block is done; otherwise null (the caller shows plain text). */
  tokensOf(file: number, hunk: number, line: number): TToken[] | null {
    const { side, block, offset } = this.locate(file, hunk, line);
    return this.blocks.get(`${this.hunkKey(file, hunk)}:${side}:${block}`)?.[offset] ?? null;
  }

  /** The blocks holding these lines are what to highlight next (replaces earlier requests: they scrolled away). */
  request(lines: readonly { file: number; hunk: number; line: number }[]): void {
    const wanted = new Map<string, { file: number; hunk: number; side: "old" | "new"; block: number }>();
    for (const { file, hunk, line } of lines) {
      const { side, block } = this.locate(file, hunk, line);
      const key = `${this.hunkKey(file, hunk)}:${side}:${block}`;
      if (!this.blocks.has(key) && !wanted.has(key)) wanted.set(key, { file, hunk, side, block });
    }
    this.queue = [...wanted.values()];
    if (this.queue.length > 0 && this.handle === null) this.handle = setTimeout(this.step, 0);
  }

  private step = (): void => {
    this.handle = null;
    const loaded = engine;
    if (!loaded) {
      // Lines show as plain text until the highlighter is here; a failed load leaves them plain.
      engineLoad ??= import("./highlight").then((module) => (engine = module));
      engineLoad.then(
        () => {
          // A disposed store has an empty queue: nothing runs.
          if (this.queue.length > 0 && this.handle === null) this.handle = setTimeout(this.step, 0);
        },
        () => undefined,
      );
      return;
    }
    const started = performance.now();
    // A language's first use compiles its grammar: that is a task of its own.
    const first = this.queue[0];
    if (first && loaded.prepareLanguage(this.files[first.file]!.language)) {
      this.handle = setTimeout(this.step, 0);
      return;
    }
    // One block at least, then more while the slice lasts under ~8 ms (a grammar not yet compiled waits for the next slice).
    while (this.queue.length > 0) {
      const next = this.queue[0]!;
      if (!loaded.isLanguagePrepared(this.files[next.file]!.language)) break;
      this.queue.shift();
      this.highlightBlock(loaded, next.file, next.hunk, next.side, next.block);
      if (performance.now() - started > 8) break;
    }
    this.version++;
    for (const listener of this.listeners) listener();
    if (this.queue.length > 0) this.handle = setTimeout(this.step, 0);
  };

  private highlightBlock(loaded: TEngine, file: number, hunk: number, side: "old" | "new", block: number): void {
    const key = `${this.hunkKey(file, hunk)}:${side}:${block}`;
    if (this.blocks.has(key)) return;
    const { language, hunks } = this.files[file]!;
    const lines = hunks[hunk]!.lines;
    const data = this.sidesOf(file, hunk)[side];
    const start = data.starts[block]!;
    const end = data.starts[block + 1] ?? data.lines.length;
    const texts = data.lines.slice(start, end).map((i) => lines[i]!.text);
    // Up to LOOKBACK_LINES lines before the block, and no more than LOOKBACK_CHARS of them.
    const lookback: string[] = [];
    let chars = 0;
    for (let p = start - 1; p >= 0 && lookback.length < LOOKBACK_LINES; p--) {
      const text = lines[data.lines[p]!]!.text;
      chars += text.length + 1;
      if (chars > LOOKBACK_CHARS) break;
      lookback.unshift(text);
    }
    this.blocks.set(key, loaded.highlightLines(texts, language, lookback));
  }

  dispose(): void {
    if (this.handle !== null) clearTimeout(this.handle);
    this.handle = null;
    this.queue = [];
    this.listeners.clear();
  }
}
