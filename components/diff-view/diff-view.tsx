"use client";

import { startTransition, useCallback, useEffect, useId, useMemo, useState, useTransition } from "react";
import type { TCandidateDiff } from "@/lib/review/read-candidate-diff.schema";
import { DiffCommentsProvider, type TDiffCommenting, type TInlineComment } from "./diff-comments";
import { DiffFileSection, type TBodyState } from "./diff-file-section";
import { DiffFileTree } from "./diff-file-tree";
import type { TViewMode } from "./diff-hunks";
import { planProgressiveRender } from "./render-plan";

const TRUNCATION_TEXT: Record<NonNullable<TCandidateDiff["truncatedBy"]>, string> = {
  patch_bytes: "The diff is larger than the review page can load: files after the cut are listed with their counts but without their lines.",
  total_lines: "The diff has more lines than the review page shows: later files are listed with their counts but some or all of their lines are not shown.",
  file_lines: "At least one file has more lines than the review page shows for one file: that file's view is cut and says so.",
  file_count: "More files changed than the review page lists: the totals count all of them.",
  line_chars: "At least one line is longer than the review page shows: cut lines say how many characters are not shown.",
};

const NO_COMMENTS: readonly TInlineComment[] = [];

type TState = { signature: string; stage: number; overrides: Readonly<Record<number, boolean>>; jump: { index: number; nonce: number } | null };

/**
 * Which diff the view state belongs to. Not object identity: a server action's revalidation
 * sends the same diff again as a new object, and the teacher's open files must survive that.
 */
function signatureOf(diff: TCandidateDiff): string {
  const files = diff.files;
  return `${files.length}|${diff.totals.files}|${diff.totals.additions}|${diff.totals.deletions}|${files[0]?.path ?? ""}|${files[files.length - 1]?.path ?? ""}`;
}

const initialState = (signature: string): TState => ({ signature, stage: 0, overrides: {}, jump: null });

/**
 * The teacher's view of a candidate diff: totals, a file tree, and every file with its lines,
 * unified or side by side. The content is untrusted and is only ever rendered as text.
 *
 * Rendering is progressive (see render-plan.ts): the first files up to a line budget render at
 * once (on the server too); the rest follow in background transitions; large files wait for a
 * click. A tree click renders its file immediately and moves focus to its heading.
 */
export function DiffView({ diff, title = "Changes", comments = NO_COMMENTS, commenting = null }: { diff: TCandidateDiff; title?: string; comments?: readonly TInlineComment[]; commenting?: TDiffCommenting | null }) {
  const idPrefix = `diff${useId().replace(/[^A-Za-z0-9_-]/g, "")}`;
  const anchorIdOf = useCallback((index: number) => `${idPrefix}-file-${index}`, [idPrefix]);
  const plan = useMemo(() => planProgressiveRender(diff.files), [diff.files]);
  const [viewMode, setViewMode] = useState<TViewMode>("unified");
  const [isSwitching, startSwitching] = useTransition();
  const signature = signatureOf(diff);
  const [state, setState] = useState<TState>(() => initialState(signature));
  // Another candidate's diff starts over; React's pattern for state derived from a prop.
  if (state.signature !== signature) setState(initialState(signature));

  const isAutoShown = useCallback((index: number, stage: number) => {
    const at = plan.stageOf[index]!;
    return at >= 0 && at <= stage;
  }, [plan]);

  const bodyStateOf = (index: number): TBodyState => {
    const override = state.overrides[index];
    if (override !== undefined) return override ? "shown" : "hidden";
    if (isAutoShown(index, state.stage)) return "shown";
    return plan.stageOf[index] === -1 ? "collapsed" : "waiting";
  };

  // Background stages: one per macrotask, each in a transition, so clicks and scrolling get in between.
  // The signature is a dependency because a reset (another diff) queued after a pending stage
  // update wins over it on rebase: the stage stays 0, and only the new signature restarts the timer.
  useEffect(() => {
    if (state.stage >= plan.stageCount - 1) return;
    const handle = window.setTimeout(() => startTransition(() => setState((s) => ({ ...s, stage: s.stage + 1 }))), 0);
    return () => window.clearTimeout(handle);
  }, [state.stage, state.signature, plan.stageCount]);

  const onToggle = useCallback(
    (index: number) =>
      setState((s) => {
        const isShown = s.overrides[index] ?? isAutoShown(index, s.stage);
        return { ...s, overrides: { ...s.overrides, [index]: !isShown } };
      }),
    [isAutoShown],
  );

  const onJump = useCallback(
    (index: number) => setState((s) => ({ ...s, overrides: s.overrides[index] === false || !isAutoShown(index, s.stage) ? { ...s.overrides, [index]: true } : s.overrides, jump: { index, nonce: (s.jump?.nonce ?? 0) + 1 } })),
    [isAutoShown],
  );

  // After the jumped-to file has rendered: bring it into view and put focus on its heading.
  useEffect(() => {
    if (!state.jump) return;
    const section = document.getElementById(anchorIdOf(state.jump.index));
    section?.scrollIntoView({ block: "start" });
    document.getElementById(`${anchorIdOf(state.jump.index)}-heading`)?.focus({ preventScroll: true });
  }, [state.jump, anchorIdOf]);

  const controlCharacters = useMemo(() => diff.files.reduce((sum, f) => sum + f.controlCharacterCount, 0), [diff.files]);
  const isRendering = state.stage < plan.stageCount - 1;

  return (
    <section aria-labelledby={`${idPrefix}-title`} className="space-y-3" data-testid="diff-view" data-view={viewMode} data-rendering={isRendering ? "progressive" : "done"}>
      {diff.filesNotShown && diff.filesNotShown.length > 0 ? (
        // First, before anything else: the files the teacher will not see in full (approval is refused while any exist).
        <div role="note" className="rounded border border-red-300 bg-red-50 px-3 py-2 text-sm text-red-900" data-testid="diff-files-not-shown">
          <p className="font-semibold">
            {diff.filesNotShown.length.toLocaleString("en-US")} file{diff.filesNotShown.length === 1 ? " is" : "s are"} not shown in full:
          </p>
          <ul className="mt-1 max-h-48 overflow-auto font-mono text-xs">
            {diff.filesNotShown.map((file) => (
              <li key={`${file.reason}:${file.path}`}>
                {file.status} {file.path} — {file.reason === "not_listed" ? "not shown" : "partly shown"}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      <div className="flex flex-wrap items-center gap-3">
        <h2 id={`${idPrefix}-title`}>{title}</h2>
        <p className="text-sm text-slate-700" data-testid="diff-totals">
          {diff.totals.files.toLocaleString("en-US")} file{diff.totals.files === 1 ? "" : "s"} changed ·{" "}
          <span className="text-green-700">+{diff.totals.additions.toLocaleString("en-US")}</span>{" "}
          <span className="text-red-700">−{diff.totals.deletions.toLocaleString("en-US")}</span>
        </p>
        <div role="group" aria-label="Diff layout" className="ml-auto inline-flex overflow-hidden rounded border border-slate-300">
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
        {isSwitching || isRendering ? (
          <span role="status" className="text-xs text-slate-500">
            {isSwitching ? "Switching layout…" : "Rendering the rest of the diff…"}
          </span>
        ) : null}
      </div>
      {diff.isTruncated && diff.truncatedBy ? (
        <p role="note" className="rounded border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900" data-testid="diff-truncated">
          Not everything is shown. {TRUNCATION_TEXT[diff.truncatedBy]}
        </p>
      ) : null}
      {controlCharacters > 0 ? (
        <p role="note" className="rounded border border-amber-300 bg-amber-50 px-3 py-2 text-sm text-amber-900" data-testid="diff-control-characters">
          This change contains {controlCharacters.toLocaleString("en-US")} control or invisible characters (escape codes, bidi overrides, zero-width characters). Each is shown as a highlighted marker such as ⟨ESC⟩ or ⟨U+202E⟩; files with them say so.
        </p>
      ) : null}
      <div className="grid grid-cols-1 gap-4 lg:grid-cols-[minmax(14rem,20rem)_minmax(0,1fr)]">
        <aside className="lg:sticky lg:top-2 lg:max-h-[calc(100vh-1rem)] lg:self-start lg:overflow-auto rounded border border-slate-200 bg-white p-2">
          <DiffFileTree files={diff.files} anchorIdOf={anchorIdOf} onJump={onJump} />
          {diff.totals.files > diff.files.length ? <p className="mt-2 text-xs text-amber-900">{(diff.totals.files - diff.files.length).toLocaleString("en-US")} more files are not listed.</p> : null}
        </aside>
        <div className="min-w-0 space-y-3">
          <DiffCommentsProvider comments={comments} commenting={commenting}>
            {diff.files.map((file, index) => (
              <DiffFileSection key={index} file={file} index={index} anchorId={anchorIdOf(index)} bodyState={bodyStateOf(index)} viewMode={viewMode} onToggle={onToggle} />
            ))}
          </DiffCommentsProvider>
        </div>
      </div>
    </section>
  );
}
