"use client";
/**
 * The diff's rows virtualized against the window (@tanstack/react-virtual): whatever the size of
 * the diff, only the rows on and near the screen exist in the DOM. What is here keeps hydration
 * and scroll jumps out of long tasks — the window's size reported a task late, row heights from
 * the ResizeObserver only, the list's position read after layout, rows placed before paint — and
 * keeps the row that holds keyboard focus rendered. Each choice was measured on a 100,000-line
 * diff (e2e/diff-view-perf.spec.ts); the comments say by how much.
 */
import {
  measureElement,
  observeWindowRect,
  useWindowVirtualizer,
  type Range,
  type Rect,
  type Virtualizer,
} from "@tanstack/react-virtual";
import { useCallback, useRef, useState, type FocusEvent } from "react";
import type { TDiffRows } from "./diff-rows";

/** Rows the server renders (and hydration agrees on) before the window is known: a first screen. */
const INITIAL_RECT = { width: 1200, height: 1000 };

/**
 * The window's size for the virtualizer, first reported in a task of its own. The virtualizer
 * subscribes in a layout effect and reads the size at once; a size other than INITIAL_RECT
 * re-rendered the whole view synchronously inside the commit that hydrated it (~20 ms of that one
 * task at 100,000 lines, measured). Until the report the window counts as INITIAL_RECT, which is
 * what the server rendered rows for.
 */
function observeWindowRectSoon(instance: Virtualizer<Window, Element>, report: (rect: Rect) => void): () => void {
  let isLive = false;
  let latest: Rect | null = null;
  const unsubscribe = observeWindowRect(instance, (rect) => {
    if (isLive) report(rect);
    else latest = rect;
  });
  const handle = setTimeout(() => {
    isLive = true;
    if (latest) report(latest);
  }, 0);
  return () => {
    clearTimeout(handle);
    unsubscribe?.();
  };
}

/**
 * A row's height, from the ResizeObserver only. The virtualizer's default reads `offsetHeight`
 * of every row the moment React attaches it: a forced layout inside React's commit, so rendering
 * the rows and laying them out were one long task on every scroll jump. The observer reports each
 * new row's size right after the browser's own layout; until then the row counts as its
 * measured (or estimated) height.
 */
function measureRow(
  element: Element,
  entry: ResizeObserverEntry | undefined,
  instance: Virtualizer<Window, Element>,
): number {
  if (entry) return measureElement(element, entry, instance);
  const index = instance.indexFromElement(element);
  return instance.itemSizeCache.get(instance.options.getItemKey(index)) ?? instance.options.estimateSize(index);
}

/**
 * Places the rendered rows where the virtualizer has them now. A row measured taller or shorter
 * than its estimate (a wrapped line, an open comment) moves the rows below it; the observer says
 * so after layout and before paint, but the re-render that moves them comes a task later, so the
 * rows are placed here first and the frame is never painted with rows on top of each other. The
 * re-render then writes the same positions.
 */
function placeRows(instance: Virtualizer<Window, Element>): void {
  for (const item of instance.getVirtualItems()) {
    const element = instance.elementsCache.get(item.key);
    if (element instanceof HTMLElement)
      element.style.transform = `translateY(${item.start - instance.options.scrollMargin}px)`;
  }
}

/**
 * The virtualizer over the window for one row model. `attachList` is the list element's ref,
 * `trackFocus` its focus handler; `scrollMargin` is where the list starts on the page.
 */
export function useRowVirtualizer(model: TDiffRows) {
  // Virtualizer over the window. scrollMargin is where the list starts on the page; it moves
  // when anything above it changes height. Read in a ResizeObserver callback (after layout, so
  // no forced synchronous layout), never on every commit: at 100,000 rows a forced layout per
  // render was the largest cost measured.
  // A callback ref: the list is observed when it is attached (and let go when it is detached).
  const [scrollMargin, setScrollMargin] = useState(0);
  const attachList = useCallback((list: HTMLDivElement | null) => {
    if (!list) return;
    const update = () => {
      const top = list.getBoundingClientRect().top + window.scrollY;
      setScrollMargin((previous) => (Math.abs(top - previous) > 0.5 ? top : previous));
    };
    // Not called here: a ref runs inside React's commit, where reading the layout forces it and
    // the state update re-renders every row synchronously (13 ms of the hydration task at 100,000
    // lines, measured). The observer's first callback comes right after the first layout, and
    // until then the rows sit where the server put them (start and margin move together).
    const observer = new ResizeObserver(update);
    observer.observe(document.body);
    return () => observer.disconnect();
  }, []);
  const focusedRow = useRef<number | null>(null);
  // Stable per row model: the virtualizer re-measures all rows whenever getItemKey changes.
  const getItemKey = useCallback((i: number) => model.keys[i]!, [model]);
  // Keep the row that holds focus rendered, so keyboard focus never falls back to <body>.
  const rangeExtractor = useCallback((range: Range) => {
    const indexes: number[] = [];
    for (
      let i = Math.max(0, range.startIndex - range.overscan);
      i <= Math.min(range.count - 1, range.endIndex + range.overscan);
      i++
    )
      indexes.push(i);
    const focused = focusedRow.current;
    if (focused !== null && focused < range.count && !indexes.includes(focused)) {
      indexes.push(focused);
      indexes.sort((a, b) => a - b);
    }
    return indexes;
  }, []);
  const virtualizer = useWindowVirtualizer({
    count: model.count,
    estimateSize: model.estimateSize,
    getItemKey,
    // Rows beyond the screen on each side: enough for a wheel step, few enough that a jump lays out little.
    overscan: 8,
    scrollMargin,
    initialRect: INITIAL_RECT,
    // The same first window on the server and in hydration, whatever the restored scroll position.
    initialOffset: 0,
    useFlushSync: false,
    rangeExtractor,
    measureElement: measureRow,
    observeElementRect: observeWindowRectSoon,
    onChange: placeRows,
  });
  const items = virtualizer.getVirtualItems();
  // Which row holds focus (the list's focus events bubble from its rows' buttons and links).
  const trackFocus = useCallback((event: FocusEvent<HTMLElement>) => {
    const row = (event.target as HTMLElement).closest<HTMLElement>("[data-index]");
    focusedRow.current = row ? Number(row.dataset.index) : null;
  }, []);
  return { virtualizer, items, scrollMargin, attachList, trackFocus };
}
