/**
 * The round parts of the review page (issue 14): which round this page shows among the task's
 * rounds (each with its decision and evidence), the feedback this round answers, and every line
 * comment with where it sits in this round. Teacher-written text is rendered as plain text.
 */
import Link from "next/link";
import { StateBadge } from "@/components/state-badge";
import { formatDateTime } from "@/lib/format/format";
import type { TAnchoredLineComment } from "@/lib/review/list-line-comments";
import type { TReviewRounds } from "@/lib/review/read-review-rounds";

const VERDICT_TEXT = { approve: "approved", reject: "rejected", request_changes: "changes requested" } as const;
const VERDICT_STATE = { approve: "approved", reject: "rejected", request_changes: "changes_requested" } as const;

export function RoundsPanel({
  rounds,
  currentCandidateId,
  latestRound,
}: {
  rounds: TReviewRounds;
  currentCandidateId: string;
  latestRound: number;
}) {
  return (
    <div className="space-y-2 rounded border border-slate-200 bg-white p-3" data-testid="rounds-panel">
      <h2>
        Rounds{" "}
        <span className="text-sm font-normal text-slate-600">
          ({rounds.rounds.length} of at most {rounds.maxRounds})
        </span>
      </h2>
      <ol className="space-y-1 text-sm">
        {rounds.rounds.map((round) => {
          const isCurrent = round.candidateId === currentCandidateId;
          return (
            <li
              key={round.candidateId}
              className={`flex flex-wrap items-center gap-2 rounded px-2 py-1 ${isCurrent ? "bg-blue-50" : ""}`}
              data-testid="round-item"
              data-round={round.round}
            >
              {isCurrent ? (
                <strong>Round {round.round} (this page)</strong>
              ) : (
                <Link href={`/teacher/candidates/${round.candidateId}`} data-testid="round-link">
                  Round {round.round}
                </Link>
              )}
              <span className="font-mono text-xs text-slate-500">{round.headSha.slice(0, 12)}</span>
              <StateBadge
                state={
                  round.evidenceStatus === "pass" ? "passed" : round.evidenceStatus === "stale" ? "stale" : "failed"
                }
              />
              {round.decision ? (
                <>
                  <StateBadge state={VERDICT_STATE[round.decision.verdict]} />
                  <span className="sr-only">{VERDICT_TEXT[round.decision.verdict]}</span>
                  <span className="text-xs text-slate-600">
                    by {round.decision.teacher}, {formatDateTime(round.decision.createdAt)}
                  </span>
                </>
              ) : (
                <span className="text-xs text-slate-600">
                  {round.round === latestRound ? "not decided yet" : "no decision"}
                </span>
              )}
            </li>
          );
        })}
      </ol>
      {rounds.rounds.some((r) => r.decision?.verdict === "request_changes") && (
        <details className="text-sm">
          <summary>Earlier feedback</summary>
          <ul className="mt-1 space-y-2">
            {rounds.rounds
              .filter((r) => r.decision)
              .map((r) => (
                <li key={r.candidateId}>
                  <p className="text-xs text-slate-600">
                    Round {r.round} — {VERDICT_TEXT[r.decision!.verdict]} by {r.decision!.teacher}
                  </p>
                  <p className="whitespace-pre-wrap break-words">{r.decision!.comment}</p>
                </li>
              ))}
          </ul>
        </details>
      )}
    </div>
  );
}

/** What the teacher asked for in the previous round: the comment and that round's line comments. */
export function AnswersPanel({
  rounds,
  comments,
}: {
  rounds: TReviewRounds;
  comments: readonly TAnchoredLineComment[];
}) {
  if (!rounds.answers) return null;
  const lineComments = comments.filter((c) => c.round === rounds.answers!.round);
  return (
    <div
      className="space-y-2 rounded border border-violet-200 bg-violet-50 p-3 text-sm"
      data-testid="answered-feedback"
    >
      <h2>Feedback this round answers</h2>
      <p className="text-xs text-slate-600">
        Round {rounds.answers.round}: changes requested by {rounds.answers.teacher},{" "}
        {formatDateTime(rounds.answers.createdAt)}
      </p>
      <p className="whitespace-pre-wrap break-words" data-testid="answered-comment">
        {rounds.answers.comment}
      </p>
      {lineComments.length > 0 && (
        <p className="text-xs text-slate-600">
          …and {lineComments.length} line comment{lineComments.length === 1 ? "" : "s"}, listed below with where they
          sit now.
        </p>
      )}
    </div>
  );
}

export function LineCommentsPanel({
  comments,
  currentRound,
}: {
  comments: readonly TAnchoredLineComment[];
  currentRound: number;
}) {
  if (comments.length === 0) return null;
  return (
    <div className="space-y-2 rounded border border-slate-200 bg-white p-3 text-sm" data-testid="line-comments">
      <h2>Line comments</h2>
      <ul className="divide-y divide-slate-100">
        {comments.map((c) => (
          <li key={c.id} className="py-2" data-testid="line-comment" data-anchored={c.anchor ? "yes" : "no"}>
            <p className="text-xs text-slate-600">
              <span className="font-mono">{c.path}</span> line {c.line} (
              {c.side === "new" ? "that round's version" : "the version it was compared with"}) · round {c.round} ·{" "}
              {c.author}
            </p>
            <pre className="my-1 overflow-x-auto whitespace-pre rounded bg-slate-50 px-2 py-0.5 font-mono text-xs text-slate-700">
              {c.lineText || " "}
            </pre>
            <p className="whitespace-pre-wrap break-words">{c.body}</p>
            <p className="text-xs text-slate-500">
              {c.anchor === null
                ? `That line no longer exists in round ${currentRound}.`
                : c.round === currentRound
                  ? "On this round."
                  : `Now at line ${c.anchor.line} of ${c.anchor.side === "new" ? `round ${currentRound}'s version` : "the base"}.`}
            </p>
          </li>
        ))}
      </ul>
    </div>
  );
}
