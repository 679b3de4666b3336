/**
 * What a revision round starts from (issue 14): the previous round's candidate — its head is the
 * tree the new guest receives, and it becomes the new candidate's parent — and the teacher's
 * feedback on it, bounded, as data for TaskRequest v2. Round 1 starts from the base and has none.
 * Fails closed: a round > 1 without a previous candidate or without its "Request changes"
 * decision is an integrity failure, never a run without feedback.
 */
import type { Candidate, Task } from "../db/generated/client";
import type { Db } from "../db/client";
import { FEEDBACK_LIMITS, ZRoundFeedbackSchema, type TRoundFeedback } from "../contract/task-request";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";

export type TRoundStart = { kind: "first" } | { kind: "revision"; previous: Candidate; feedback: TRoundFeedback };

function bound(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

export async function readRoundStart(db: Db, task: Pick<Task, "id" | "round">): Promise<TRoundStart> {
  if (task.round <= 1) return { kind: "first" };
  const previous = await db.candidate.findUnique({
    where: { taskId_round: { taskId: task.id, round: task.round - 1 } },
    include: { decisions: true, lineComments: { orderBy: { createdAt: "asc" } } },
  });
  if (!previous)
    throw new AppError("STATE_CONFLICT", `Round ${task.round} has no round ${task.round - 1} candidate to start from.`);
  const decision = previous.decisions.find((d) => d.verdict === "request_changes");
  if (!decision)
    throw new AppError(
      "STATE_CONFLICT",
      `Round ${task.round - 1} was not sent back with "Request changes"; round ${task.round} has no feedback to answer.`,
    );
  const kept = previous.lineComments.slice(0, FEEDBACK_LIMITS.lineComments);
  const feedback = parseOrThrow(
    ZRoundFeedbackSchema,
    {
      answersRound: previous.round,
      comment: bound(decision.comment, FEEDBACK_LIMITS.commentChars),
      lineComments: kept.map((c) => ({
        path: c.path,
        side: c.side,
        line: c.line,
        lineText: bound(c.lineText, FEEDBACK_LIMITS.lineTextChars),
        body: bound(c.body, FEEDBACK_LIMITS.lineCommentChars),
      })),
      omittedLineComments: previous.lineComments.length - kept.length,
    },
    { code: "VALIDATION_FAILED", label: "round feedback" },
  );
  const { decisions: _decisions, lineComments: _lineComments, ...candidate } = previous;
  return { kind: "revision", previous: candidate, feedback };
}
