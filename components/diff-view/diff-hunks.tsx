import { Fragment, useMemo, type ReactNode } from "react";
import type { TDiffFile, TDiffLine } from "@/lib/review/read-candidate-diff.schema";
import { LineCommentRows, LineNumberCell } from "./diff-comments";
import { highlightHunks } from "./highlight-hunks";
import type { TToken, TTokenKind } from "./tokenize";

/**
 * The lines of one file, unified or side by side. Every piece of content is a React text node
 * (a string child) — never HTML — so markup in a line is shown as the characters it is.
 */

export type TViewMode = "unified" | "split";

const TOKEN_CLASS: Record<Exclude<TTokenKind, "plain">, string> = {
  keyword: "text-violet-700",
  string: "text-emerald-800",
  comment: "text-slate-500 italic",
  number: "text-orange-700",
  marker: "rounded-sm bg-amber-300 px-0.5 text-black outline outline-1 outline-amber-600",
};

const MARKER_TITLE = "A control or invisible character (escape, bidi override, zero-width …) replaced by a visible marker";

const ROW_CLASS: Record<TDiffLine["kind"], string> = { add: "bg-green-50", del: "bg-red-50", context: "" };
const NUMBER_CLASS: Record<TDiffLine["kind"], string> = { add: "bg-green-100", del: "bg-red-100", context: "" };
const SIGN: Record<TDiffLine["kind"], string> = { add: "+", del: "-", context: " " };
const NUM = "w-12 select-none px-2 text-right align-top text-slate-500";
const CODE = "whitespace-pre-wrap break-all px-2 align-top";

function CodeText({ tokens }: { tokens: readonly TToken[] }) {
  return tokens.map((token, i) =>
    token.kind === "plain" ? (
      token.text
    ) : token.kind === "marker" ? (
      <mark key={i} className={TOKEN_CLASS.marker} title={MARKER_TITLE}>
        {token.text}
      </mark>
    ) : (
      <span key={i} className={TOKEN_CLASS[token.kind]}>
        {token.text}
      </span>
    ),
  );
}

/** What the line does not show: a missing final newline, or characters cut from an overlong line. */
function LineNotes({ line }: { line: TDiffLine }) {
  if (!line.hasNoNewline && !line.omittedChars) return null;
  return (
    <>
      {line.omittedChars ? <span className="ml-1 select-none rounded bg-slate-200 px-1 text-slate-700 not-italic">… {line.omittedChars.toLocaleString("en-US")} more characters not shown</span> : null}
      {line.hasNoNewline ? <span className="ml-1 select-none rounded bg-slate-200 px-1 text-slate-700 not-italic">no newline at end of file</span> : null}
    </>
  );
}

function CodeCell({ line, tokens, className }: { line: TDiffLine; tokens: readonly TToken[]; className?: string }) {
  return (
    <td className={`${CODE} ${className ?? ""}`}>
      <span className="select-none text-slate-400">{SIGN[line.kind]}</span>
      <CodeText tokens={tokens} />
      <LineNotes line={line} />
    </td>
  );
}

function HunkHeaderRow({ header, colSpan }: { header: string; colSpan: number }) {
  return (
    <tr>
      <td colSpan={colSpan} className="whitespace-pre-wrap break-all bg-sky-50 px-2 py-0.5 text-slate-500">
        {header}
      </td>
    </tr>
  );
}

export function DiffHunks({ file, viewMode }: { file: TDiffFile; viewMode: TViewMode }) {
  const tokens = useMemo(() => highlightHunks(file.hunks, file.language), [file.hunks, file.language]);
  if (viewMode === "split") return <SplitHunks file={file} tokens={tokens} />;
  return (
    <table className="w-full table-fixed border-collapse font-mono text-xs leading-[18px]" data-view="unified">
      <colgroup>
        <col className="w-12" />
        <col className="w-12" />
        <col />
      </colgroup>
      {file.hunks.map((hunk, h) => (
        <tbody key={h}>
          <HunkHeaderRow header={hunk.header} colSpan={3} />
          {hunk.lines.map((line, l) => (
            <Fragment key={l}>
              <tr className={ROW_CLASS[line.kind]} data-kind={line.kind}>
                <LineNumberCell path={file.path} side="old" line={line.oldNumber} className={NUMBER_CLASS[line.kind]} />
                <LineNumberCell path={file.path} side="new" line={line.newNumber} className={NUMBER_CLASS[line.kind]} />
                <CodeCell line={line} tokens={tokens[h]![l]!} />
              </tr>
              <LineCommentRows path={file.path} oldLine={line.oldNumber} newLine={line.newNumber} colSpan={3} />
            </Fragment>
          ))}
        </tbody>
      ))}
    </table>
  );
}

type TSplitRow = { left: number | null; right: number | null };

/** Pairs a run of deleted lines with the added lines that follow it; context lines sit on both sides. */
export function pairSplitRows(lines: readonly TDiffLine[]): TSplitRow[] {
  const rows: TSplitRow[] = [];
  let dels: number[] = [];
  let adds: number[] = [];
  const flush = () => {
    for (let i = 0; i < Math.max(dels.length, adds.length); i++) rows.push({ left: dels[i] ?? null, right: adds[i] ?? null });
    dels = [];
    adds = [];
  };
  lines.forEach((line, index) => {
    if (line.kind === "context") {
      flush();
      rows.push({ left: index, right: index });
    } else if (line.kind === "del") {
      if (adds.length > 0) flush();
      dels.push(index);
    } else {
      adds.push(index);
    }
  });
  flush();
  return rows;
}

function SplitSide({ path, line, tokens, side }: { path: string; line: TDiffLine | undefined; tokens: readonly TToken[] | undefined; side: "old" | "new" }): ReactNode {
  if (!line || !tokens) {
    return (
      <>
        <td className={`${NUM} bg-slate-50`} />
        <td className={`${CODE} bg-slate-50`} />
      </>
    );
  }
  return (
    <>
      <LineNumberCell path={path} side={side} line={side === "new" ? line.newNumber : line.oldNumber} className={NUMBER_CLASS[line.kind]} />
      <CodeCell line={line} tokens={tokens} className={ROW_CLASS[line.kind]} />
    </>
  );
}

function SplitHunks({ file, tokens }: { file: TDiffFile; tokens: TToken[][][] }) {
  return (
    <table className="w-full table-fixed border-collapse font-mono text-xs leading-[18px]" data-view="split">
      <colgroup>
        <col className="w-12" />
        <col />
        <col className="w-12" />
        <col />
      </colgroup>
      {file.hunks.map((hunk, h) => (
        <tbody key={h}>
          <HunkHeaderRow header={hunk.header} colSpan={4} />
          {pairSplitRows(hunk.lines).map((row, r) => {
            const left = row.left === null ? undefined : hunk.lines[row.left];
            const right = row.right === null ? undefined : hunk.lines[row.right];
            // A context line shows its new-side highlighting on both sides.
            return (
              <Fragment key={r}>
                <tr>
                  <SplitSide path={file.path} side="old" line={left} tokens={row.left === null ? undefined : tokens[h]![row.left]} />
                  <SplitSide path={file.path} side="new" line={right} tokens={row.right === null ? undefined : tokens[h]![row.right]} />
                </tr>
                <LineCommentRows path={file.path} oldLine={left?.oldNumber ?? null} newLine={right?.newNumber ?? null} colSpan={4} />
              </Fragment>
            );
          })}
        </tbody>
      ))}
    </table>
  );
}
