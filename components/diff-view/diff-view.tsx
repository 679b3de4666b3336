"use client";

import { startTransition, Suspense, useCallback, useEffect, useId, useMemo, useState, useTransition } from "react";
import type { TDiffOutline, TDiffPage } from "@/lib/review/diff-chunks";
import { DiffCommentsProvider, type TDiffCommenting, type TInlineComment } from "./diff-comments";
import { DiffFileTree } from "./diff-file-tree";
import { DiffNotes, FilesNotShownNote } from "./diff-notices";
import { DiffRowView, type TLineMatches } from "./diff-row";
import { buildDiffRows, type TViewMode } from "./diff-rows";
import { DiffSearch, useDiffSearch } from "./diff-search-box";
import { HighlightStore } from "./highlight-store";
import { useDiffChunks } from "./use-diff-chunks";
import { useRowVirtualizer } from "./use-row-virtualizer";
import { formatCount } from "@/lib/format/format";

const NO_COMMENTS: readonly TInlineComment[] = [];

type TState = { signature: string; overrides: Readonly<Record<number, boolean>> };

/**
 * Which diff the view state belongs to. Not object identity: a server action's revalidation
 * sends the same diff again as a new object, and the teacher's open files must survive that.
 */
function signatureOf(outline: TDiffOutline, chunkUrl: string | null): string {
  const files = outline.files;
  return `${chunkUrl ?? ""}|${outline.chunkCount}|${files.length}|${outline.totals.files}|${outline.totals.additions}|${outline.totals.deletions}|${files[0]?.path ?? ""}|${files[files.length - 1]?.path ?? ""}`;
}

/**
 * The teacher's view of a unified diff (a candidate against its base, or the interdiff of two
 * rounds): totals, a search box, a file tree, and every file with its lines, unified or side by
 * side. The content is untrusted and is only ever rendered as text.
 *
 * The page sends only the outline and the first chunk of lines; the rest arrive from the chunk
 * route in small chunks (use-diff-chunks.ts), each appended in a transition, so no task parses or
 * renders the whole diff at once. Until a file's lines are here, a row of its height stands in for
 * them; the search waits for them and says so; a failure shows in the view with a retry.
 *
 * The rows are virtualized against the window (@tanstack/react-virtual): whatever the size of the
 * diff, only the rows on and near the screen exist in the DOM, so a 100,000-line diff is shown
 * whole without freezing the page. The virtualizer's callbacks are stable per row model: a new
 * `getItemKey` makes it re-measure every row, O(rows) on every render. Heights are measured as rows render (lines wrap, comments
 * open). The server renders the first screen, hydration agrees with it. Highlighting runs in
 * small slices for the rows on screen (highlight-store.ts). The browser's find sees only rendered
 * rows, so the search box searches the diff itself and scrolls to each match.
 *
 * Keyboard: the tree's links and the search box's buttons move the window to a file or a match
 * and put focus on that file's heading; Tab then walks the buttons of the rows on screen. The row
 * holding focus is kept rendered even when it scrolls away, so focus is never lost.
 */
export function DiffView({
  page,
  chunkUrl = null,
  title = "Changes",
  comments = NO_COMMENTS,
  commenting = null,
}: {
  page: TDiffPage;
  /** Where the other chunks come from (`?chunk=n` is appended); null when the page holds every chunk. */
  chunkUrl?: string | null;
  title?: string;
  comments?: readonly TInlineComment[];
  commenting?: TDiffCommenting | null;
}) {
  const idPrefix = `diff${useId().replace(/[^A-Za-z0-9_-]/g, "")}`;
  const anchorIdOf = useCallback((index: number) => `${idPrefix}-file-${index}`, [idPrefix]);
  const [viewMode, setViewMode] = useState<TViewMode>("unified");
  const [isSwitching, startSwitching] = useTransition();
  const diff = page.outline;
  const signature = signatureOf(diff, chunkUrl);
  const [state, setState] = useState<TState>(() => ({ signature, overrides: {} }));
  // Another candidate's diff starts over; React's pattern for state derived from a prop.
  if (state.signature !== signature) setState({ signature, overrides: {} });
  const load = useDiffChunks(page, chunkUrl, signature);
  const files = load.files;
  // What does not change while lines arrive (so rows, the tree and callbacks stay put).
  const outlineFiles = diff.files;

  const isOpenIn = useCallback(
    (overrides: TState["overrides"], index: number) => overrides[index] ?? !outlineFiles[index]!.isLarge,
    [outlineFiles],
  );
  const model = useMemo(
    () => buildDiffRows(files, (i) => isOpenIn(state.overrides, i), viewMode),
    [files, isOpenIn, state.overrides, viewMode],
  );

  // Highlighting: one store per diff (same signature = same lines, more of them as they arrive).
  // eslint-disable-next-line react-hooks/exhaustive-deps -- the store follows `files` just below
  const store = useMemo(() => new HighlightStore(files), [signature]);
  // Before any row of this render asks it for tokens; idempotent, and lines only ever grow.
  store.setFiles(files);
  useEffect(() => () => store.dispose(), [store]);
  // Highlighted blocks re-render the rows in a transition (sliced), never in the block's own task.
  const [highlightVersion, setHighlightVersion] = useState(0);
  // React's own startTransition, not useTransition's: that one first re-renders its owner (this
  // whole view) synchronously to set isPending — a SyncLane update in React 19 — once per slice.
  useEffect(() => store.subscribe(() => startTransition(() => setHighlightVersion(store.getVersion()))), [store]);

  const search = useDiffSearch(files, load.arrivedLines, load.isComplete);

  const { virtualizer, items, scrollMargin, attachList, trackFocus } = useRowVirtualizer(model);

  // Ask for highlighting of the lines on screen (and the overscan), newest window first.
  useEffect(() => {
    const wanted: { file: number; hunk: number; line: number }[] = [];
    for (const item of items) {
      if (item.index >= model.count) continue;
      const row = model.rowAt(item.index);
      if (row.type === "line") wanted.push(row);
      else if (row.type === "pair") {
        if (row.left >= 0) wanted.push({ file: row.file, hunk: row.hunk, line: row.left });
        if (row.right >= 0) wanted.push({ file: row.file, hunk: row.hunk, line: row.right });
      }
    }
    store.request(wanted);
  }, [items, model, store]);

  const tokensOf = useCallback((file: number, hunk: number, line: number) => store.tokensOf(file, hunk, line), [store]);
  const { byLine, matches, current: currentMatch } = search;
  const matchesOf = useCallback(
    (file: number, hunk: number, line: number): TLineMatches | null => {
      const indexes = byLine.get(`${file}:${hunk}:${line}`);
      if (!indexes) return null;
      return {
        ranges: indexes.map((i) => [matches[i]!.start, matches[i]!.end] as const),
        current: indexes.indexOf(currentMatch),
      };
    },
    [byLine, matches, currentMatch],
  );

  const onToggle = useCallback(
    (index: number) =>
      setState((s) => ({ ...s, overrides: { ...s.overrides, [index]: !isOpenIn(s.overrides, index) } })),
    [isOpenIn],
  );

  // A jump (tree click, search step) opens the file if needed, then scrolls once the rows exist.
  const [jump, setJump] = useState<{ file: number; line?: { hunk: number; line: number }; nonce: number } | null>(null);
  const onJump = useCallback(
    (file: number, line?: { hunk: number; line: number }) => {
      setState((s) =>
        isOpenIn(s.overrides, file) || !outlineFiles[file]!.hunkCount
          ? s
          : { ...s, overrides: { ...s.overrides, [file]: true } },
      );
      setJump((j) => ({ file, line, nonce: (j?.nonce ?? 0) + 1 }));
    },
    [outlineFiles, isOpenIn],
  );
  useEffect(() => {
    if (!jump) return;
    const row = jump.line ? model.rowOfLine(jump.file, jump.line.hunk, jump.line.line) : model.fileRow[jump.file];
    if (row === null || row === undefined) return;
    virtualizer.scrollToIndex(row, { align: jump.line ? "center" : "start" });
    // Focus the file's heading once it is rendered (a few frames at most), without scrolling again.
    if (jump.line) return;
    let frames = 0;
    let handle = requestAnimationFrame(function focusWhenThere() {
      const heading = document.getElementById(`${anchorIdOf(jump.file)}-heading`);
      if (heading) heading.focus({ preventScroll: true });
      else if (frames++ < 60) handle = requestAnimationFrame(focusWhenThere);
    });
    return () => cancelAnimationFrame(handle);
    // Only a new jump scrolls; later changes of the row model must not pull the window back.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [jump]);

  const onSearchStep = useCallback(
    (index: number) => {
      const match = matches[index];
      if (match) onJump(match.file, { hunk: match.hunk, line: match.line });
    },
    [matches, onJump],
  );

  // The tree in a Suspense boundary (nothing suspends): React hydrates it later, in time slices,
  // instead of inside the page's first task. The element is memoized: a boundary whose props
  // change before it hydrated (the virtualizer re-renders soon after hydration)
  // is hydrated synchronously at once, which is what the boundary is there to avoid.
  const tree = useMemo(
    () => (
      <Suspense fallback={null}>
        <DiffFileTree files={outlineFiles} anchorIdOf={anchorIdOf} onJump={onJump} />
      </Suspense>
    ),
    [outlineFiles, anchorIdOf, onJump],
  );
  const controlCharacters = useMemo(
    () => outlineFiles.reduce((sum, f) => sum + f.controlCharacterCount, 0),
    [outlineFiles],
  );
  const loadedPercent = load.totalLines === 0 ? 100 : Math.floor((load.arrivedLines / load.totalLines) * 100);
  const loadingNote = load.error ? "some lines could not be loaded" : `lines still loading (${loadedPercent}%)`;
  const [isHydrated, setIsHydrated] = useState(false);
  useEffect(() => setIsHydrated(true), []);
  const rowVersion = `${highlightVersion}|${search.version}|${search.current}`;

  return (
    <section
      aria-labelledby={`${idPrefix}-title`}
      className="space-y-3"
      data-testid="diff-view"
      data-view={viewMode}
      data-hydrated={isHydrated ? "true" : "false"}
      data-rows={model.count}
      data-loaded={load.isComplete ? "true" : load.error ? "error" : "false"}
    >
      {/* First, before anything else: the files the teacher will not see in full (approval needs their acknowledgement). */}
      <FilesNotShownNote filesNotShown={diff.filesNotShown} />
      <div className="flex flex-wrap items-center gap-3">
        <h2 id={`${idPrefix}-title`}>{title}</h2>
        <p className="text-sm text-slate-700" data-testid="diff-totals">
          {formatCount(diff.totals.files)} file{diff.totals.files === 1 ? "" : "s"} changed ·{" "}
          <span className="text-green-700">+{formatCount(diff.totals.additions)}</span>{" "}
          <span className="text-red-700">−{formatCount(diff.totals.deletions)}</span>
        </p>
        {/* In the header row, so the list below does not move when loading ends. */}
        {!load.isComplete && !load.error ? (
          <span role="status" className="text-xs text-slate-600" data-testid="diff-loading">
            Loading lines… {formatCount(load.arrivedLines)} of {formatCount(load.totalLines)} ({loadedPercent}%)
          </span>
        ) : null}
        <div
          role="group"
          aria-label="Diff layout"
          className="ml-auto inline-flex overflow-hidden rounded border border-slate-300"
        >
          {(["unified", "split"] as const).map((mode) => (
            <button
              key={mode}
              type="button"
              aria-pressed={viewMode === mode}
              onClick={() => startSwitching(() => setViewMode(mode))}
              className={`px-3 py-1 text-sm focus:outline-2 focus:outline-blue-600 ${viewMode === mode ? "bg-slate-800 text-white" : "bg-white text-slate-700 hover:bg-slate-100"}`}
            >
              {mode === "unified" ? "Unified" : "Split"}
            </button>
          ))}
        </div>
        {isSwitching ? (
          <span role="status" className="text-xs text-slate-500">
            Switching layout…
          </span>
        ) : null}
      </div>
      <DiffNotes outline={diff} controlCharacters={controlCharacters} load={load} />
      <DiffSearch idPrefix={idPrefix} search={search} onStep={onSearchStep} loadingNote={loadingNote} />
      <div className="grid grid-cols-1 gap-4 lg:grid-cols-[minmax(14rem,20rem)_minmax(0,1fr)]">
        <aside
          style={{ contain: "content" }}
          className="lg:sticky lg:top-2 lg:max-h-[calc(100vh-1rem)] lg:self-start lg:overflow-auto rounded border border-slate-200 bg-white p-2"
        >
          {tree}
          {diff.totals.files > files.length ? (
            <p className="mt-2 text-xs text-amber-900">
              {formatCount(diff.totals.files - files.length)} more files are not listed.
            </p>
          ) : null}
        </aside>
        <div className="min-w-0">
          <DiffCommentsProvider comments={comments} commenting={commenting}>
            <div
              ref={attachList}
              className="relative"
              // Size and layout containment: rows coming and going never re-lay out the rest of the page.
              style={{ height: virtualizer.getTotalSize(), contain: "strict" }}
              data-testid="diff-rows"
              onFocus={trackFocus}
            >
              {items.map((item) => {
                if (item.index >= model.count) return null;
                const row = model.rowAt(item.index);
                return (
                  <div
                    key={item.key}
                    data-index={item.index}
                    ref={virtualizer.measureElement}
                    className="absolute left-0 top-0 w-full"
                    style={{ transform: `translateY(${item.start - scrollMargin}px)`, contain: "layout style" }}
                  >
                    <DiffRowView
                      row={row}
                      file={files[row.file]!}
                      viewMode={viewMode}
                      anchorIdOf={anchorIdOf}
                      isOpen={isOpenIn(state.overrides, row.file)}
                      onToggle={onToggle}
                      tokensOf={tokensOf}
                      matchesOf={matchesOf}
                      version={rowVersion}
                      loadError={load.error}
                    />
                  </div>
                );
              })}
            </div>
          </DiffCommentsProvider>
        </div>
      </div>
    </section>
  );
}
