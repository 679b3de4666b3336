import { startTransition, useEffect, useMemo, useRef, useState } from "react";
import type { TDiffFile } from "@/lib/review/read-candidate-diff.schema";
import {
  indexMatches,
  MAX_MATCHES,
  SEARCH_START,
  searchSlice,
  SLICE_LINES,
  SLICE_MS,
  type TSearchCursor,
  type TSearchMatch,
} from "./diff-search";
import { formatCount } from "@/lib/format/format";

/**
 * The search box over the diff (the browser's find sees only rendered rows of the virtualized
 * list): a query, the match count, previous/next buttons (Enter / Shift+Enter in the box), and a
 * live status for screen readers. The scan runs in slices (diff-search.ts).
 */

export type TDiffSearchState = {
  query: string;
  setQuery: (query: string) => void;
  matches: readonly TSearchMatch[];
  byLine: ReadonlyMap<string, number[]>;
  /** The scan of the lines there are is not done (the count is not final). */
  isSearching: boolean;
  /** The scan is done with the lines there are, but more lines are still arriving. */
  isWaitingForLines: boolean;
  current: number;
  setCurrent: (index: number) => void;
  /** Bumps when the match list changes (rows re-render their marks). */
  version: number;
};

const EMPTY: TSearchMatch[] = [];

type TResult = { query: string; matches: TSearchMatch[]; isDone: boolean; isWaiting: boolean; version: number };

/**
 * The scan follows the diff as its lines arrive: `files` grows (new arrays, lines appended in
 * order) and `arrivedLines` counts the lines there are. A scan that reached the last line there
 * is waits, and goes on from that line when more arrive; a new query starts over. Results are
 * published in a transition, so React renders the marks in slices too.
 */
export function useDiffSearch(
  files: readonly TDiffFile[],
  arrivedLines: number,
  isComplete: boolean,
): TDiffSearchState {
  const [query, setQuery] = useState("");
  const [result, setResult] = useState<TResult>({
    query: "",
    matches: EMPTY,
    isDone: true,
    isWaiting: false,
    version: 0,
  });
  const [current, setCurrent] = useState(-1);
  // React's own startTransition: useTransition's would first re-render the hook's owner (the
  // whole DiffView) synchronously to set isPending, once per published slice of the scan.
  // The running scan: its query, what it found, where it is. Survives renders (lines arriving).
  const scan = useRef<{ query: string; found: TSearchMatch[]; cursor: TSearchCursor | null } | null>(null);
  const latest = useRef({ files, arrivedLines: isComplete ? Number.POSITIVE_INFINITY : arrivedLines });
  useEffect(() => {
    latest.current = { files, arrivedLines: isComplete ? Number.POSITIVE_INFINITY : arrivedLines };
  }, [files, arrivedLines, isComplete]);

  useEffect(() => {
    if (query.length === 0) {
      scan.current = null;
      return;
    }
    const isNewQuery = scan.current?.query !== query;
    if (isNewQuery) scan.current = { query, found: [], cursor: SEARCH_START };
    const job = scan.current!;
    if (!job.cursor) return;
    const publish = (isDone: boolean) => {
      const isWaiting = !isDone;
      const matches = job.found.slice();
      startTransition(() => {
        setResult((r) => ({ query, matches, isDone, isWaiting, version: r.version + 1 }));
        if (isNewQuery) setCurrent(-1);
      });
    };
    const step = () => {
      const { files: now, arrivedLines: arrived } = latest.current;
      const started = performance.now();
      while (job.cursor && job.cursor.ordinal < arrived && performance.now() - started < SLICE_MS)
        job.cursor = searchSlice(now, query, job.cursor, SLICE_LINES, job.found, arrived);
      if (!job.cursor) return publish(true);
      if (job.cursor.ordinal >= arrived) return publish(false); // wait for more lines (this effect runs again)
      handle = setTimeout(step, 0);
    };
    // Debounced: a new query's scan starts once typing pauses; more lines continue it at once.
    let handle = setTimeout(step, isNewQuery ? 150 : 0);
    return () => clearTimeout(handle);
  }, [files, arrivedLines, isComplete, query]);

  const isCurrent = query.length > 0 && result.query === query;
  const matches = isCurrent ? result.matches : EMPTY;
  const byLine = useMemo(() => indexMatches(matches), [matches]);
  const isWaitingForLines = isCurrent && result.isWaiting && !isComplete;
  return {
    query,
    setQuery,
    matches,
    byLine,
    isSearching: query.length > 0 && (!isCurrent || (!result.isDone && !isWaitingForLines)),
    isWaitingForLines,
    current: isCurrent ? current : -1,
    setCurrent,
    version: result.version,
  };
}

export function DiffSearch({
  idPrefix,
  search,
  onStep,
  loadingNote,
}: {
  idPrefix: string;
  search: TDiffSearchState;
  onStep: (index: number) => void;
  /** What the lines still arriving are, e.g. "lines still loading (40%)" or "some lines failed to load". */
  loadingNote: string;
}) {
  const count = search.matches.length;
  const step = (delta: 1 | -1) => {
    if (count === 0) return;
    const next = search.current < 0 ? (delta === 1 ? 0 : count - 1) : (search.current + delta + count) % count;
    search.setCurrent(next);
    onStep(next);
  };
  const counted = `${search.current < 0 ? "" : `${formatCount(search.current + 1)} of `}${count >= MAX_MATCHES ? `more than ${formatCount(MAX_MATCHES)}` : formatCount(count)} match${count === 1 ? "" : "es"}`;
  const status =
    search.query === ""
      ? ""
      : search.isSearching
        ? "Searching…"
        : search.isWaitingForLines
          ? // Never a final-looking count while lines are missing: a teacher must not read "No matches" too early.
            `Searching… ${count === 0 ? "no matches yet" : `${counted} so far`}; ${loadingNote}`
          : count === 0
            ? "No matches"
            : counted;
  return (
    <div role="search" aria-label="Search the diff" className="flex flex-wrap items-center gap-2">
      <label htmlFor={`${idPrefix}-search`} className="text-sm text-slate-700">
        Find in diff
      </label>
      <input
        id={`${idPrefix}-search`}
        type="search"
        value={search.query}
        onChange={(event) => search.setQuery(event.target.value)}
        onKeyDown={(event) => {
          if (event.key !== "Enter") return;
          event.preventDefault();
          step(event.shiftKey ? -1 : 1);
        }}
        placeholder="text in changed lines"
        className="w-64 rounded border border-slate-300 px-2 py-1 font-mono text-sm"
        data-testid="diff-search"
        aria-describedby={`${idPrefix}-search-status`}
      />
      <button
        type="button"
        onClick={() => step(-1)}
        disabled={count === 0}
        className="rounded border border-slate-300 bg-white px-2 py-1 text-sm hover:bg-slate-100 focus:outline-2 focus:outline-blue-600 disabled:opacity-50"
      >
        Previous<span className="sr-only"> match</span>
      </button>
      <button
        type="button"
        onClick={() => step(1)}
        disabled={count === 0}
        className="rounded border border-slate-300 bg-white px-2 py-1 text-sm hover:bg-slate-100 focus:outline-2 focus:outline-blue-600 disabled:opacity-50"
      >
        Next<span className="sr-only"> match</span>
      </button>
      <span
        id={`${idPrefix}-search-status`}
        role="status"
        className="text-sm text-slate-600"
        data-testid="diff-search-status"
      >
        {status}
      </span>
    </div>
  );
}
