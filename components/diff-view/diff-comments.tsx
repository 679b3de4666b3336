"use client";
/**
 * Line comments inside the diff (issue 14): the comments anchored on a shown line are rendered
 * under it, and — when the round is open for review — a line number is a button that opens a
 * comment form for that line and side. The comment text is teacher-written but still rendered as
 * plain text. Each line's comments render inside that line's row of the virtualized list (so
 * its measured height includes them). The form posts the line's commit (the diff's left commit for the old side, the head
 * for the new side); the server reads the line from git and refuses a line that is not there.
 */
import { createContext, useCallback, useContext, useMemo, useState } from "react";
import { ActionForm, type TFormAction } from "@/components/action-form";
import { Field } from "@/components/form-field";

export type TInlineComment = {
  id: string;
  path: string;
  side: "old" | "new";
  line: number;
  body: string;
  author: string;
  round: number;
  isFromEarlierRound: boolean;
};

export type TDiffCommenting = { candidateId: string; leftSha: string; headSha: string; action: TFormAction };

type TTarget = { path: string; side: "old" | "new"; line: number };

type TContext = {
  commentsAt: (path: string, side: "old" | "new", line: number | null) => TInlineComment[];
  commenting: TDiffCommenting | null;
  target: TTarget | null;
  open: (target: TTarget | null) => void;
};

const EMPTY: TInlineComment[] = [];
const DiffCommentsContext = createContext<TContext>({
  commentsAt: () => EMPTY,
  commenting: null,
  target: null,
  open: () => undefined,
});

export function DiffCommentsProvider({
  comments,
  commenting,
  children,
}: {
  comments: readonly TInlineComment[];
  commenting: TDiffCommenting | null;
  children: React.ReactNode;
}) {
  const [target, setTarget] = useState<TTarget | null>(null);
  const index = useMemo(() => {
    const map = new Map<string, TInlineComment[]>();
    for (const c of comments) {
      const key = `${c.side}\u0000${c.line}\u0000${c.path}`;
      map.set(key, [...(map.get(key) ?? []), c]);
    }
    return map;
  }, [comments]);
  const commentsAt = useCallback(
    (path: string, side: "old" | "new", line: number | null) =>
      line === null ? EMPTY : (index.get(`${side}\u0000${line}\u0000${path}`) ?? EMPTY),
    [index],
  );
  const value = useMemo(() => ({ commentsAt, commenting, target, open: setTarget }), [commentsAt, commenting, target]);
  return <DiffCommentsContext.Provider value={value}>{children}</DiffCommentsContext.Provider>;
}

export function useDiffComments(): TContext {
  return useContext(DiffCommentsContext);
}

const NUM = "select-none px-2 text-right text-slate-500";

/** A line number; a button that opens the comment form when the round takes comments. */
export function LineNumberCell({
  path,
  side,
  line,
  className,
}: {
  path: string;
  side: "old" | "new";
  line: number | null;
  className: string;
}) {
  const { commenting, open } = useDiffComments();
  if (line === null || !commenting) return <div className={`${NUM} ${className}`}>{line}</div>;
  return (
    <div className={`${NUM} ${className} p-0`}>
      <button
        type="button"
        onClick={() => open({ path, side, line })}
        className="w-full px-2 text-right text-slate-500 hover:bg-blue-100 hover:text-blue-800 focus:outline-2 focus:outline-blue-600"
        aria-label={`Comment on line ${line} (${side === "new" ? "this round's version" : "the version it is compared with"})`}
        title="Comment on this line"
        data-testid="line-comment-button"
        data-side={side}
        data-line={line}
      >
        {line}
      </button>
    </div>
  );
}

/** The comments on one displayed line (both sides of a unified row), and the open form if it targets the line. */
export function LineCommentRows({
  path,
  oldLine,
  newLine,
}: {
  path: string;
  oldLine: number | null;
  newLine: number | null;
}) {
  const { commentsAt, target, commenting } = useDiffComments();
  const comments = [...commentsAt(path, "old", oldLine), ...commentsAt(path, "new", newLine)];
  const isTarget =
    target !== null &&
    target.path === path &&
    ((target.side === "old" && target.line === oldLine) || (target.side === "new" && target.line === newLine));
  if (comments.length === 0 && !(isTarget && commenting)) return null;
  return (
    // The last, full-width row of the line's grid (diff-row.tsx).
    <div className="col-span-full bg-slate-50 px-3 py-2 font-sans text-sm">
      {comments.map((c) => (
        <div
          key={c.id}
          className="mb-2 rounded border border-blue-200 bg-white p-2"
          data-testid="inline-comment"
          data-side={c.side}
          data-line={c.line}
        >
          <p className="text-xs text-slate-600">
            {c.author} · round {c.round}
            {c.isFromEarlierRound ? " · carried over from an earlier round" : ""}
          </p>
          <p className="whitespace-pre-wrap break-words">{c.body}</p>
        </div>
      ))}
      {isTarget && commenting && target && <LineCommentForm commenting={commenting} target={target} />}
    </div>
  );
}

function LineCommentForm({ commenting, target }: { commenting: TDiffCommenting; target: TTarget }) {
  const { open } = useDiffComments();
  return (
    <ActionForm
      action={commenting.action}
      className="space-y-2 rounded border border-slate-300 bg-white p-2"
      testId="line-comment-form"
      resultTestId="line-comment-result"
      submitLabel="Add comment"
      pendingLabel="Adding…"
      size="xs"
      onSuccess={() => open(null)}
    >
      <input type="hidden" name="candidateId" value={commenting.candidateId} />
      <input type="hidden" name="path" value={target.path} />
      <input type="hidden" name="side" value={target.side} />
      <input type="hidden" name="line" value={target.line} />
      <input type="hidden" name="lineSha" value={target.side === "new" ? commenting.headSha : commenting.leftSha} />
      <Field
        name="body"
        label={`Comment on ${target.path} line ${target.line} (${target.side === "new" ? "this round's version" : "the version it is compared with"})`}
      >
        <textarea
          rows={2}
          maxLength={2000}
          required
          autoFocus
          className="mt-1 w-full rounded border border-slate-300 p-2"
        />
      </Field>
      <button type="button" onClick={() => open(null)} className="text-xs text-slate-600 underline">
        Close
      </button>
    </ActionForm>
  );
}
