import { memo, type ReactNode } from "react";
import type { TDiffLine } from "@/lib/review/read-candidate-diff.schema";
import { LineCommentRows, LineNumberCell } from "./diff-comments";
import { pendingHeight, type TDiffRow, type TViewFile, type TViewMode } from "./diff-rows";
import { DiffFileHeader } from "./diff-file-header";
import { plainTokens, type TToken, type TTokenKind } from "./highlight-tokens";
import { formatCount } from "@/lib/format/format";

/**
 * One row of the virtualized diff: a file header, a hunk header, a line (unified) or a pair of
 * lines (split). Every piece of content is a React text node (a string child) — never HTML — so
 * markup in a line is shown as the characters it is. Search matches are <mark> elements around
 * slices of those text nodes.
 */

const TOKEN_CLASS: Record<Exclude<TTokenKind, "plain">, string> = {
  keyword: "text-violet-700",
  string: "text-emerald-800",
  comment: "text-slate-500 italic",
  number: "text-orange-700",
  title: "text-blue-800",
  type: "text-teal-700",
  meta: "text-sky-700",
  marker: "rounded-sm bg-amber-300 px-0.5 text-black outline outline-1 outline-amber-600",
};

const MARKER_TITLE =
  "A control or invisible character (escape, bidi override, zero-width …) replaced by a visible marker";

const ROW_CLASS: Record<TDiffLine["kind"], string> = { add: "bg-green-50", del: "bg-red-50", context: "" };
const NUMBER_CLASS: Record<TDiffLine["kind"], string> = { add: "bg-green-100", del: "bg-red-100", context: "" };
const SIGN: Record<TDiffLine["kind"], string> = { add: "+", del: "-", context: " " };
/** What a screen reader says for the sign column (the visible +/- is hidden from it). */
const SIGN_LABEL: Record<TDiffLine["kind"], string> = { add: "added: ", del: "deleted: ", context: "" };
const CODE = "min-w-0 whitespace-pre-wrap break-all px-2";
const LINE_ROW = "border-x border-slate-200 font-mono text-xs leading-[18px]";
const GRID: Record<TViewMode, string> = {
  unified: "grid grid-cols-[3rem_3rem_minmax(0,1fr)]",
  split: "grid grid-cols-[3rem_minmax(0,1fr)_3rem_minmax(0,1fr)]",
};

/** Search matches on one line: [start, end) ranges, and which one (if any) is the current match. */
export type TLineMatches = { ranges: readonly (readonly [number, number])[]; current: number };

function CodeText({ tokens, matches }: { tokens: readonly TToken[]; matches: TLineMatches | null }): ReactNode {
  if (!matches || matches.ranges.length === 0) return tokens.map((token, i) => renderToken(token, i));
  // Cut tokens at match boundaries; each cut piece inside a match is wrapped in <mark>.
  const out: ReactNode[] = [];
  let offset = 0;
  let key = 0;
  for (const token of tokens) {
    const end = offset + token.text.length;
    let at = offset;
    while (at < end) {
      const m = matches.ranges.findIndex(([s, e]) => e > at && s < end);
      const range = m >= 0 ? matches.ranges[m]! : null;
      if (!range || range[0] >= end) {
        out.push(renderToken({ kind: token.kind, text: token.text.slice(at - offset) }, key++));
        break;
      }
      if (range[0] > at) {
        out.push(renderToken({ kind: token.kind, text: token.text.slice(at - offset, range[0] - offset) }, key++));
        at = range[0];
      }
      const stop = Math.min(end, range[1]);
      out.push(
        <mark
          key={key++}
          className={m === matches.current ? "bg-orange-400 text-black" : "bg-yellow-200 text-black"}
          data-match={m === matches.current ? "current" : "other"}
        >
          {renderToken({ kind: token.kind, text: token.text.slice(at - offset, stop - offset) }, 0)}
        </mark>,
      );
      at = stop;
    }
    offset = end;
  }
  return out;
}

function renderToken(token: TToken, key: number): ReactNode {
  if (token.kind === "plain") return token.text;
  if (token.kind === "marker") {
    return (
      <mark key={key} className={TOKEN_CLASS.marker} title={MARKER_TITLE}>
        {token.text}
      </mark>
    );
  }
  return (
    <span key={key} className={TOKEN_CLASS[token.kind]}>
      {token.text}
    </span>
  );
}

/** What the line does not show: a missing final newline, or characters cut from an overlong line. */
function LineNotes({ line }: { line: TDiffLine }) {
  if (!line.hasNoNewline && !line.omittedChars) return null;
  return (
    <>
      {line.omittedChars ? (
        <span className="ml-1 select-none rounded bg-slate-200 px-1 text-slate-700 not-italic">
          … {formatCount(line.omittedChars)} more characters not shown
        </span>
      ) : null}
      {line.hasNoNewline ? (
        <span className="ml-1 select-none rounded bg-slate-200 px-1 text-slate-700 not-italic">
          no newline at end of file
        </span>
      ) : null}
    </>
  );
}

function CodeCell({
  line,
  tokens,
  matches,
  className,
}: {
  line: TDiffLine;
  tokens: readonly TToken[] | null;
  matches: TLineMatches | null;
  className?: string;
}) {
  return (
    <div className={`${CODE} ${className ?? ""}`}>
      <span className="select-none text-slate-400" aria-hidden="true">
        {SIGN[line.kind]}
      </span>
      {SIGN_LABEL[line.kind] ? <span className="sr-only">{SIGN_LABEL[line.kind]}</span> : null}
      <CodeText tokens={tokens ?? plainTokens(line.text)} matches={matches} />
      <LineNotes line={line} />
    </div>
  );
}

export type TRowProps = {
  row: TDiffRow;
  /** The row's file (a new object only when lines of that file arrive). */
  file: TViewFile;
  viewMode: TViewMode;
  anchorIdOf: (index: number) => string;
  isOpen: boolean;
  onToggle: (index: number) => void;
  /** Tokens of a line of this row, or null while its block is not highlighted yet. */
  tokensOf: (file: number, hunk: number, line: number) => TToken[] | null;
  matchesOf: (file: number, hunk: number, line: number) => TLineMatches | null;
  /** Changes when tokens or matches of rows may have changed (the memo key for tokensOf and matchesOf). */
  version: string;
  /** Why lines stopped arriving, for a pending row; null while they arrive. */
  loadError?: string | null;
};

/** Rows are made afresh per render (diff-rows.ts rowAt): compared by content, not identity. */
function isSameRow(a: TDiffRow, b: TDiffRow): boolean {
  if (a.type !== b.type || a.file !== b.file) return false;
  if (a.type === "hunk" && b.type === "hunk") return a.hunk === b.hunk;
  if (a.type === "line" && b.type === "line") return a.hunk === b.hunk && a.line === b.line;
  if (a.type === "pair" && b.type === "pair") return a.hunk === b.hunk && a.left === b.left && a.right === b.right;
  if (a.type === "pending" && b.type === "pending") return a.lines === b.lines && a.hunks === b.hunks;
  return true;
}

/** tokensOf and matchesOf change only together with `version`, which is compared. */
function isSameRowProps(a: TRowProps, b: TRowProps): boolean {
  return (
    isSameRow(a.row, b.row) &&
    a.file === b.file &&
    a.viewMode === b.viewMode &&
    a.anchorIdOf === b.anchorIdOf &&
    a.isOpen === b.isOpen &&
    a.onToggle === b.onToggle &&
    a.version === b.version &&
    a.loadError === b.loadError
  );
}

/** Placeholder stripes: wherever the teacher scrolls inside a pending row, it reads as "not here yet". */
const PENDING_STRIPES = "repeating-linear-gradient(135deg, transparent 0 12px, rgb(148 163 184 / 0.12) 12px 24px)";

/** Stands in for the lines of a file that have not arrived yet: as tall as they will be. */
function PendingRow({ lines, hunks, loadError }: { lines: number; hunks: number; loadError: string | null }) {
  return (
    <div
      className={`border-x border-slate-200 px-3 py-1 text-xs ${loadError ? "bg-red-50 text-red-900" : "bg-slate-50 text-slate-600"}`}
      style={{ height: pendingHeight(lines, hunks), backgroundImage: PENDING_STRIPES }}
      data-testid="diff-pending"
    >
      {/* Not sticky: rows are placed by transform, and sticky positioning works on the untransformed box. */}
      {loadError
        ? `${formatCount(lines)} more lines of this file could not be loaded (${loadError}). “Try loading them again” is above the diff.`
        : `Loading ${formatCount(lines)} more lines of this file…`}
    </div>
  );
}

export const DiffRowView = memo(function DiffRowView({
  row,
  file,
  anchorIdOf,
  isOpen,
  onToggle,
  tokensOf,
  matchesOf,
  loadError = null,
}: TRowProps) {
  if (row.type === "pending") return <PendingRow lines={row.lines} hunks={row.hunks} loadError={loadError} />;
  if (row.type === "file")
    return (
      <DiffFileHeader
        file={file}
        index={row.file}
        anchorId={anchorIdOf(row.file)}
        isOpen={isOpen}
        onToggle={onToggle}
      />
    );
  if (row.type === "cut") {
    return (
      <p className="border-x border-b border-slate-200 bg-amber-50 px-3 py-1 text-xs text-amber-900">
        Only part of this file&apos;s diff is shown (the page&apos;s line budget);{" "}
        {formatCount(file.additions + file.deletions)} lines changed in all.
      </p>
    );
  }
  const hunk = file.hunks[row.hunk]!;
  if (row.type === "hunk") {
    return (
      <div className="whitespace-pre-wrap break-all border-x border-slate-200 bg-sky-50 px-2 py-0.5 font-mono text-xs leading-[18px] text-slate-700">
        {hunk.header}
      </div>
    );
  }
  if (row.type === "line") {
    const line = hunk.lines[row.line]!;
    // One element holds the whole row (its comments are the grid's last, full-width row): a
    // scroll jump adds ~60 rows at once, and every element is style, layout and hydration work.
    return (
      <div className={`${LINE_ROW} ${GRID.unified} ${ROW_CLASS[line.kind]}`} data-kind={line.kind}>
        <LineNumberCell path={file.path} side="old" line={line.oldNumber} className={NUMBER_CLASS[line.kind]} />
        <LineNumberCell path={file.path} side="new" line={line.newNumber} className={NUMBER_CLASS[line.kind]} />
        <CodeCell
          line={line}
          tokens={tokensOf(row.file, row.hunk, row.line)}
          matches={matchesOf(row.file, row.hunk, row.line)}
        />
        <LineCommentRows path={file.path} oldLine={line.oldNumber} newLine={line.newNumber} />
      </div>
    );
  }
  const left = row.left >= 0 ? hunk.lines[row.left] : undefined;
  const right = row.right >= 0 ? hunk.lines[row.right] : undefined;
  const side = (line: TDiffLine | undefined, index: number, which: "old" | "new") =>
    !line ? (
      <>
        <div className="bg-slate-50" />
        <div className="bg-slate-50" />
      </>
    ) : (
      <>
        <LineNumberCell
          path={file.path}
          side={which}
          line={which === "new" ? line.newNumber : line.oldNumber}
          className={NUMBER_CLASS[line.kind]}
        />
        <CodeCell
          line={line}
          tokens={tokensOf(row.file, row.hunk, index)}
          matches={matchesOf(row.file, row.hunk, index)}
          className={ROW_CLASS[line.kind]}
        />
      </>
    );
  return (
    <div className={`${LINE_ROW} ${GRID.split}`} data-kind={right?.kind ?? left?.kind} data-view="split">
      {side(left, row.left, "old")}
      {side(right, row.right, "new")}
      <LineCommentRows path={file.path} oldLine={left?.oldNumber ?? null} newLine={right?.newNumber ?? null} />
    </div>
  );
}, isSameRowProps);
