import { memo } from "react";
import type { TDiffFile } from "@/lib/review/read-candidate-diff.schema";
import { DiffHunks, type TViewMode } from "./diff-hunks";
import { StatusBadge } from "./status-badge";
import { estimateSectionHeight, lineCountOf } from "./render-plan";

const MODE_LABEL: Record<string, string> = { "100644": "file", "100755": "executable file", "120000": "symbolic link", "160000": "submodule link" };

export type TBodyState = "shown" | "waiting" | "collapsed" | "hidden";

const formatNumber = (n: number) => n.toLocaleString("en-US");

function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${formatNumber(bytes)} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** What changed besides lines: the file's kind or mode. */
function modeFact(file: TDiffFile): string | null {
  if (file.status === "T") return `${MODE_LABEL[file.oldMode ?? ""] ?? file.oldMode} → ${MODE_LABEL[file.newMode ?? ""] ?? file.newMode}`;
  if (file.status === "A" && file.newMode && file.newMode !== "100644") return `new ${MODE_LABEL[file.newMode] ?? file.newMode}`;
  if (file.status === "D" && file.oldMode && file.oldMode !== "100644") return `deleted ${MODE_LABEL[file.oldMode] ?? file.oldMode}`;
  if (file.oldMode && file.newMode && file.oldMode !== file.newMode) return `mode ${file.oldMode} → ${file.newMode}`;
  return null;
}

/** The note a file shows when it has no lines to show. */
function emptyBodyNote(file: TDiffFile): string {
  if (file.isBinary) return `Binary file — its contents are not shown${file.sizeBytes === undefined ? "" : ` (${formatBytes(file.sizeBytes)})`}.`;
  if (file.isTruncated) return "Not shown: the diff is larger than the review page's budget. The file is counted in the totals.";
  if (file.status === "M") return "Only the mode changed; the contents are the same.";
  if (file.status === "A") return "New empty file.";
  if (file.status === "D") return "Deleted empty file.";
  return "No lines to show.";
}

type TProps = {
  file: TDiffFile;
  index: number;
  anchorId: string;
  bodyState: TBodyState;
  viewMode: TViewMode;
  onToggle: (index: number) => void;
};

/**
 * One file: a heading (status, path, mode change, counts), warnings, and its lines or a note.
 * Memoised: background rendering of other files, or opening one, re-renders only the files whose
 * props changed. `content-visibility: auto` lets the browser skip layout and paint of sections
 * that are off screen; the intrinsic size keeps the scrollbar honest meanwhile.
 */
export const DiffFileSection = memo(function DiffFileSection({ file, index, anchorId, bodyState, viewMode, onToggle }: TProps) {
  const headingId = `${anchorId}-heading`;
  const bodyId = `${anchorId}-body`;
  const hasLines = file.hunks.length > 0 && !file.isBinary;
  const isShown = bodyState === "shown";
  const lines = lineCountOf(file);
  const mode = modeFact(file);
  return (
    <section
      id={anchorId}
      aria-labelledby={headingId}
      className="scroll-mt-2 overflow-hidden rounded border border-slate-200 bg-white"
      style={{ contentVisibility: "auto", containIntrinsicSize: `auto ${estimateSectionHeight(file, isShown)}px` }}
      data-testid="diff-file"
      data-status={file.status}
      data-body={hasLines ? bodyState : "note"}
    >
      <header className="flex flex-wrap items-center gap-x-3 gap-y-1 border-b border-slate-200 bg-slate-50 px-3 py-2">
        <h3 id={headingId} tabIndex={-1} className="flex min-w-0 flex-1 items-start gap-2 font-mono text-sm font-medium text-slate-900 focus:outline-2 focus:outline-blue-600">
          <StatusBadge status={file.status} />
          <span className="min-w-0 whitespace-pre-wrap break-all">{file.path}</span>
        </h3>
        {file.oldPath ? <span className="font-mono text-xs text-slate-600">from {file.oldPath}</span> : null}
        {mode ? <span className="rounded bg-slate-200 px-1.5 py-0.5 text-xs text-slate-700">{mode}</span> : null}
        <span className="font-mono text-xs">
          <span className="text-green-700">+{formatNumber(file.additions)}</span> <span className="text-red-700">−{formatNumber(file.deletions)}</span>
        </span>
        {hasLines ? (
          <button
            type="button"
            onClick={() => onToggle(index)}
            aria-expanded={isShown}
            aria-controls={bodyId}
            className="rounded border border-slate-300 bg-white px-2 py-0.5 text-xs text-slate-700 hover:bg-slate-100 focus:outline-2 focus:outline-blue-600"
          >
            {isShown ? "Hide" : "Show"}
            <span className="sr-only"> {file.path}</span>
          </button>
        ) : null}
      </header>
      {file.controlCharacterCount > 0 ? (
        <p className="border-b border-amber-200 bg-amber-50 px-3 py-1 text-xs text-amber-900" data-testid="control-characters">
          {formatNumber(file.controlCharacterCount)} control or invisible character{file.controlCharacterCount === 1 ? "" : "s"} (escape codes, bidi overrides, zero-width …) in this file are shown as highlighted markers such as ⟨ESC⟩ or ⟨U+202E⟩.
        </p>
      ) : null}
      {file.newMode === "120000" && hasLines ? <p className="px-3 py-1 text-xs text-slate-600">Symbolic link: the line is the path it points to.</p> : null}
      <div id={bodyId}>
        {!hasLines ? (
          <p className="px-3 py-2 text-sm text-slate-600">{emptyBodyNote(file)}</p>
        ) : isShown ? (
          <DiffHunks file={file} viewMode={viewMode} />
        ) : (
          <p className="flex flex-wrap items-center gap-2 px-3 py-2 text-sm text-slate-600">
            {bodyState === "collapsed"
              ? file.isLarge
                ? `Large file (${formatNumber(file.additions + file.deletions)} changed lines) — collapsed.`
                : "Not rendered by itself: the diff is long."
              : bodyState === "waiting"
                ? `${formatNumber(lines)} lines — rendering…`
                : "Hidden."}
            <button type="button" onClick={() => onToggle(index)} className="rounded border border-slate-300 bg-white px-2 py-0.5 text-xs text-slate-700 hover:bg-slate-100 focus:outline-2 focus:outline-blue-600">
              Show {formatNumber(lines)} lines<span className="sr-only"> of {file.path}</span>
            </button>
          </p>
        )}
        {isShown && file.isTruncated ? (
          <p className="border-t border-slate-200 bg-amber-50 px-3 py-1 text-xs text-amber-900">
            Only part of this file&apos;s diff is shown (the page&apos;s line budget); {formatNumber(file.additions + file.deletions)} lines changed in all.
          </p>
        ) : null}
      </div>
    </section>
  );
});
