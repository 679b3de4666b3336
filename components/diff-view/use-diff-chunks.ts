"use client";
/**
 * The diff's lines as they arrive (issue 16). The page sends the outline and chunk 0
 * (lib/review/diff-chunks.ts); this hook fetches chunks 1…n−1 from the chunk route, strictly in
 * order (one fetch ahead), and appends each to the files the view holds. Each chunk is a few
 * hundred KB: parsing and appending it is a few milliseconds, and the state update is a
 * transition, so React renders the grown diff in slices and input is never held up.
 *
 * Failures are visible, never silent: a chunk that does not come (HTTP error, network, a chunk
 * that does not continue the lines held, another diff's chunk) stops loading with an error the
 * view shows; the teacher can retry. Lines are only ever appended, never changed, so everything
 * keyed by a line (highlight blocks, search matches, measured rows) stays valid.
 */
import { startTransition, useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { TDiffChunk, TDiffOutline, TDiffPage } from "@/lib/review/diff-chunks";
import type { TDiffHunk } from "@/lib/review/read-candidate-diff.schema";
import type { TViewFile } from "./diff-rows";

export type TDiffLoad = {
  files: readonly TViewFile[];
  /** Chunks held (chunk 0 included) and in all. */
  loadedChunks: number;
  chunkCount: number;
  /** Lines held; every line of the diff when `isComplete`. */
  arrivedLines: number;
  totalLines: number;
  isComplete: boolean;
  /** Why loading stopped, bounded; null while it goes on or when done. */
  error: string | null;
  retry: () => void;
};

export type TDiffLoadState = {
  signature: string;
  files: TViewFile[];
  loaded: number;
  arrivedLines: number;
  error: string | null;
};
type TState = TDiffLoadState;

/**
 * Appends a chunk to the lines held (new arrays for what changed, nothing mutated). A chunk that
 * does not continue exactly where the lines held end is another diff's: refused (throws).
 */
export function applyChunk(state: TState, chunk: TDiffChunk, chunkCount: number): TState {
  if (chunk.index !== state.loaded || chunk.count !== chunkCount)
    throw new Error("the server sent lines of another version of this diff");
  const files = state.files.slice();
  let arrived = state.arrivedLines;
  for (const piece of chunk.pieces) {
    const file = files[piece.file];
    if (!file) throw new Error("the server sent lines of a file this diff does not have");
    const hunks = file.hunks.slice();
    const last = hunks[hunks.length - 1];
    if (piece.start === 0 && piece.header !== undefined && piece.hunk === hunks.length) {
      hunks.push({ header: piece.header, lines: piece.lines });
    } else if (piece.start > 0 && last && piece.hunk === hunks.length - 1 && piece.start === last.lines.length) {
      hunks[hunks.length - 1] = { header: last.header, lines: last.lines.concat(piece.lines) } satisfies TDiffHunk;
    } else {
      throw new Error("the server sent lines that do not continue the lines shown");
    }
    arrived += piece.lines.length;
    files[piece.file] = { ...file, hunks };
  }
  return { ...state, files, loaded: state.loaded + 1, arrivedLines: arrived };
}

export function initialState(page: TDiffPage, signature: string): TState {
  const empty: TState = {
    signature,
    files: page.outline.files.map((file) => ({ ...file, hunks: [] })),
    loaded: 0,
    arrivedLines: 0,
    error: null,
  };
  try {
    return applyChunk(empty, page.first, page.outline.chunkCount);
  } catch (error) {
    return { ...empty, error: (error as Error).message };
  }
}

/** The route's `{ error: { message } }`, bounded; or the status line. */
async function errorOf(response: Response): Promise<string> {
  const body = (await response.json().catch(() => null)) as { error?: { message?: unknown } } | null;
  const message = typeof body?.error?.message === "string" ? body.error.message : response.statusText;
  return `HTTP ${response.status}${message ? `: ${message.slice(0, 300)}` : ""}`;
}

async function fetchChunk(url: string, index: number, signal: AbortSignal): Promise<TDiffChunk> {
  const response = await fetch(`${url}${url.includes("?") ? "&" : "?"}chunk=${index}`, {
    signal,
    credentials: "same-origin",
    headers: { accept: "application/json" },
  });
  if (!response.ok) throw new Error(await errorOf(response));
  // Trusted shape (our own route, which validated it); the content is untrusted text, rendered as text.
  const chunk = (await response.json()) as TDiffChunk;
  if (!chunk || !Array.isArray(chunk.pieces) || typeof chunk.index !== "number")
    throw new Error("the server sent no lines");
  return chunk;
}

function totalLinesOf(outline: TDiffOutline): number {
  return outline.files.reduce((n, f) => n + f.lineCount, 0);
}

export function useDiffChunks(page: TDiffPage, chunkUrl: string | null, signature: string): TDiffLoad {
  const [held, setState] = useState<TState>(() => initialState(page, signature));
  // Another diff starts over (React's pattern for state derived from a prop); the same diff sent
  // again (a server action's revalidation) keeps the lines already here. This render already
  // uses the new diff's lines: never one diff's lines under another's outline.
  let state = held;
  if (held.signature !== signature) {
    state = initialState(page, signature);
    setState(state);
  }
  // Chunks are appended with React's own startTransition: useTransition's would first re-render
  // the hook's owner (the whole DiffView) synchronously to set isPending, once per chunk.
  const chunkCount = page.outline.chunkCount;
  const [attempt, setAttempt] = useState(0);
  // Chunks fetched ahead, by index; dropped when the diff changes.
  const ahead = useRef<{ key: string; chunks: Map<number, Promise<TDiffChunk>>; controller: AbortController } | null>(
    null,
  );

  useEffect(() => {
    if (state.signature !== signature || state.error || state.loaded >= chunkCount || !chunkUrl) return;
    const key = `${signature}\u0000${chunkUrl}\u0000${attempt}`;
    if (ahead.current?.key !== key) {
      ahead.current?.controller.abort();
      ahead.current = { key, chunks: new Map(), controller: new AbortController() };
    }
    const { chunks, controller } = ahead.current;
    const get = (index: number) => {
      let promise = chunks.get(index);
      if (!promise) {
        promise = fetchChunk(chunkUrl, index, controller.signal);
        // Settled later or never awaited (aborted): not an unhandled rejection.
        promise.catch(() => undefined);
        chunks.set(index, promise);
      }
      return promise;
    };
    const index = state.loaded;
    let isCurrent = true;
    const next = get(index);
    if (index + 1 < chunkCount) get(index + 1);
    next.then(
      (chunk) => {
        chunks.delete(index);
        if (!isCurrent) return;
        startTransition(() =>
          setState((s) => {
            if (s.signature !== signature || s.loaded !== index) return s;
            try {
              return applyChunk(s, chunk, chunkCount);
            } catch (error) {
              return { ...s, error: (error as Error).message };
            }
          }),
        );
      },
      (error: unknown) => {
        chunks.delete(index);
        if (!isCurrent || controller.signal.aborted) return;
        const message = error instanceof Error ? error.message : String(error);
        setState((s) => (s.signature === signature ? { ...s, error: message.slice(0, 400) } : s));
      },
    );
    return () => {
      isCurrent = false;
    };
  }, [state.signature, state.error, state.loaded, signature, chunkCount, chunkUrl, attempt]);

  // Leaving the page stops what is in flight.
  useEffect(
    () => () => {
      ahead.current?.controller.abort();
      ahead.current = null;
    },
    [],
  );

  const retry = useCallback(() => {
    setAttempt((a) => a + 1);
    setState((s) => ({ ...s, error: null }));
  }, []);
  const totalLines = useMemo(() => totalLinesOf(page.outline), [page.outline]);
  return {
    files: state.files,
    loadedChunks: state.loaded,
    chunkCount,
    arrivedLines: state.arrivedLines,
    totalLines,
    isComplete: state.loaded >= chunkCount,
    // Lines beyond the first chunk with nowhere to fetch them from: said, not silently missing.
    error:
      state.error ?? (!chunkUrl && state.loaded < chunkCount ? "the rest of the lines cannot be loaded here" : null),
    retry,
  };
}
