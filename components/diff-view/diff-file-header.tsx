import type { TDiffFile } from "@/lib/review/read-candidate-diff.schema";
import { hasLines, lineCountOf, type TViewFile } from "./diff-rows";
import { StatusBadge } from "./status-badge";
import { formatBytes, formatCount } from "@/lib/format/format";

/**
 * The header row of one file in the virtualized diff: a heading (status, path, mode change,
 * counts) that takes focus after a tree jump, its Show/Hide button, its warnings, and — when its
 * lines are not shown — a note saying why, with a button to show them.
 */

const MODE_LABEL: Record<string, string> = {
  "100644": "file",
  "100755": "executable file",
  "120000": "symbolic link",
  "160000": "submodule link",
};

/** What changed besides lines: the file's kind or mode. */
function modeFact(file: TDiffFile): string | null {
  if (file.status === "T")
    return `${MODE_LABEL[file.oldMode ?? ""] ?? file.oldMode} → ${MODE_LABEL[file.newMode ?? ""] ?? file.newMode}`;
  if (file.status === "A" && file.newMode && file.newMode !== "100644")
    return `new ${MODE_LABEL[file.newMode] ?? file.newMode}`;
  if (file.status === "D" && file.oldMode && file.oldMode !== "100644")
    return `deleted ${MODE_LABEL[file.oldMode] ?? file.oldMode}`;
  if (file.oldMode && file.newMode && file.oldMode !== file.newMode) return `mode ${file.oldMode} → ${file.newMode}`;
  return null;
}

/** The note a file shows when it has no lines to show. */
function emptyBodyNote(file: TDiffFile): string {
  // A known format by its bytes (issue 27): what it is, how big, and the digest of exactly those bytes.
  if (file.isBinary && file.binaryKind)
    return `Binary file (${file.binaryKind}${file.sizeBytes === undefined ? "" : `, ${formatBytes(file.sizeBytes)}`}) — its contents are not shown. sha256 ${file.sha256 ?? "unknown"}.`;
  if (file.isBinary)
    return `Binary file — its contents are not shown${file.sizeBytes === undefined ? "" : ` (${formatBytes(file.sizeBytes)})`}. It is listed above as not shown.`;
  if (file.isTruncated)
    return "Not shown: the diff is larger than the review page's budget. The file is counted in the totals.";
  if (file.status === "M") return "Only the mode changed; the contents are the same.";
  if (file.status === "A") return "New empty file.";
  if (file.status === "D") return "Deleted empty file.";
  return "No lines to show.";
}

type TProps = { file: TViewFile; index: number; anchorId: string; isOpen: boolean; onToggle: (index: number) => void };

export function DiffFileHeader({ file, index, anchorId, isOpen, onToggle }: TProps) {
  const headingId = `${anchorId}-heading`;
  const withLines = hasLines(file);
  const isShown = withLines && isOpen;
  const mode = modeFact(file);
  const lines = lineCountOf(file);
  return (
    <div
      id={anchorId}
      className="mt-3 rounded-t border border-slate-200 bg-white"
      data-testid="diff-file"
      data-status={file.status}
      data-body={withLines ? (isShown ? "shown" : file.isLarge ? "collapsed" : "hidden") : "note"}
    >
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1 border-b border-slate-200 bg-slate-50 px-3 py-2">
        <h3
          id={headingId}
          tabIndex={-1}
          className="flex min-w-0 flex-1 items-start gap-2 font-mono text-sm font-medium text-slate-900 focus:outline-2 focus:outline-blue-600"
        >
          <StatusBadge status={file.status} />
          <span className="min-w-0 whitespace-pre-wrap break-all">{file.path}</span>
        </h3>
        {file.oldPath ? <span className="font-mono text-xs text-slate-600">from {file.oldPath}</span> : null}
        {mode ? <span className="rounded bg-slate-200 px-1.5 py-0.5 text-xs text-slate-700">{mode}</span> : null}
        <span className="font-mono text-xs">
          <span className="text-green-700">+{formatCount(file.additions)}</span>{" "}
          <span className="text-red-700">−{formatCount(file.deletions)}</span>
        </span>
        {withLines ? (
          <button
            type="button"
            onClick={() => onToggle(index)}
            aria-expanded={isShown}
            className="rounded border border-slate-300 bg-white px-2 py-0.5 text-xs text-slate-700 hover:bg-slate-100 focus:outline-2 focus:outline-blue-600"
          >
            {isShown ? "Hide" : `Show ${formatCount(lines)} lines`}
            <span className="sr-only"> of {file.path}</span>
          </button>
        ) : null}
      </div>
      {file.controlCharacterCount > 0 ? (
        <p
          className="border-b border-amber-200 bg-amber-50 px-3 py-1 text-xs text-amber-900"
          data-testid="control-characters"
        >
          {formatCount(file.controlCharacterCount)} control or invisible character
          {file.controlCharacterCount === 1 ? "" : "s"} (escape codes, bidi overrides, zero-width …) in this file are
          shown as highlighted markers such as ⟨ESC⟩ or ⟨U+202E⟩.
        </p>
      ) : null}
      {file.newMode === "120000" && withLines ? (
        <p className="px-3 py-1 text-xs text-slate-600">Symbolic link: the line is the path it points to.</p>
      ) : null}
      {!withLines ? <p className="px-3 py-2 text-sm text-slate-600">{emptyBodyNote(file)}</p> : null}
      {withLines && !isShown ? (
        <p className="px-3 py-2 text-sm text-slate-600">
          {file.isLarge
            ? `Large file (${formatCount(file.additions + file.deletions)} changed lines) — collapsed; search still finds its lines.`
            : "Hidden."}
        </p>
      ) : null}
    </div>
  );
}
