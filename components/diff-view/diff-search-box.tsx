import { useEffect, useMemo, useState } from "react";
import type { TDiffFile } from "@/lib/review/read-candidate-diff.schema";
import { indexMatches, MAX_MATCHES, searchSlice, SLICE_LINES, type TSearchCursor, type TSearchMatch } from "./diff-search";

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
  isSearching: boolean;
  current: number;
  setCurrent: (index: number) => void;
  /** Bumps when the match list changes (rows re-render their marks). */
  version: number;
};

const EMPTY: TSearchMatch[] = [];

export function useDiffSearch(files: readonly TDiffFile[]): TDiffSearchState {
  const [query, setQuery] = useState("");
  // The matches of `result.query` over `result.files`; stale while a new scan runs.
  const [result, setResult] = useState<{ query: string; files: readonly TDiffFile[] | null; matches: TSearchMatch[]; version: number }>({
    query: "",
    files: null,
    matches: EMPTY,
    version: 0,
  });
  const [current, setCurrent] = useState(-1);

  useEffect(() => {
    if (query.length === 0) return;
    const found: TSearchMatch[] = [];
    let cursor: TSearchCursor | null = { file: 0, hunk: 0, line: 0 };
    // Debounced: a scan starts once typing pauses; each slice is one macrotask.
    const step = () => {
      cursor = searchSlice(files, query, cursor!, SLICE_LINES, found);
      if (cursor) {
        handle = setTimeout(step, 0);
        return;
      }
      setResult((r) => ({ query, files, matches: found, version: r.version + 1 }));
      setCurrent(-1);
    };
    let handle = setTimeout(step, 150);
    return () => clearTimeout(handle);
  }, [files, query]);

  const isCurrent = query.length > 0 && result.query === query && result.files === files;
  const matches = isCurrent ? result.matches : EMPTY;
  const byLine = useMemo(() => indexMatches(matches), [matches]);
  return {
    query,
    setQuery,
    matches,
    byLine,
    isSearching: query.length > 0 && !isCurrent,
    current: isCurrent ? current : -1,
    setCurrent,
    version: result.version,
  };
}

export function DiffSearch({ idPrefix, search, onStep }: { idPrefix: string; search: TDiffSearchState; onStep: (index: number) => void }) {
  const count = search.matches.length;
  const step = (delta: 1 | -1) => {
    if (count === 0) return;
    const next = search.current < 0 ? (delta === 1 ? 0 : count - 1) : (search.current + delta + count) % count;
    search.setCurrent(next);
    onStep(next);
  };
  const status =
    search.query === ""
      ? ""
      : search.isSearching
        ? "Searching…"
        : count === 0
          ? "No matches"
          : `${search.current < 0 ? "" : `${(search.current + 1).toLocaleString("en-US")} of `}${count >= MAX_MATCHES ? `more than ${MAX_MATCHES.toLocaleString("en-US")}` : count.toLocaleString("en-US")} match${count === 1 ? "" : "es"}`;
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
      <span id={`${idPrefix}-search-status`} role="status" className="text-sm text-slate-600" data-testid="diff-search-status">
        {status}
      </span>
    </div>
  );
}
