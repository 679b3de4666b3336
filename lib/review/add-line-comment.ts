/**
 * A teacher's comment on one line of the round under review (issue 14). Bound to the candidate,
 * path, side and line — and to the commit whose file the line number counts in (`lineSha`): the
 * candidate's head for side new; the diff's left commit (the base, or the previous round's head
 * on an interdiff) for side old. The line must exist there; its text is read from git, never
 * taken from the form. Only the latest round, while it waits for review, takes comments: they go
 * out with its "Request changes".
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import { can } from "../auth/permissions";
import type { Actor } from "../contract/actor";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { readFileLines } from "./candidate-file-lines";

export const LINE_COMMENT_LIMITS = { bodyChars: 2000, lineTextChars: 500, perCandidate: 200 } as const;

export const ZLineCommentSchema = z
  .object({
    candidateId: z.string().regex(/^cand_[0-9a-f]{32}$/),
    path: z.string().min(1).max(4096),
    side: z.enum(["old", "new"]),
    line: z.coerce.number().int().min(1).max(10_000_000),
    lineSha: z.string().regex(/^[0-9a-f]{40}$/),
    body: z.string().trim().min(1, "A comment needs some text.").max(LINE_COMMENT_LIMITS.bodyChars),
  })
  .strict();

export async function addLineComment(
  deps: { db: Db; dataDir: string },
  { actor, ...fields }: z.input<typeof ZLineCommentSchema> & { actor: Actor },
) {
  const { db } = deps;
  if (!can(actor, "review.decide")) throw new AppError("NOT_FOUND", "No such candidate.");
  const input = parseOrThrow(ZLineCommentSchema, fields, { code: "VALIDATION_FAILED", label: "line comment" });
  const candidate = await db.candidate.findUnique({
    where: { id: input.candidateId },
    include: { task: { select: { round: true, state: true } } },
  });
  if (!candidate) throw new AppError("NOT_FOUND", "No such candidate.");
  if (candidate.round !== candidate.task.round || candidate.task.state !== "review_pending") {
    throw new AppError(
      "REVIEW_STALE",
      `Round ${candidate.round} is no longer under review. Reload the page to comment on the latest round.`,
    );
  }
  const parent = candidate.parentCandidateId
    ? await db.candidate.findUnique({ where: { id: candidate.parentCandidateId }, select: { headSha: true } })
    : null;
  const leftShas = [candidate.baseSha, ...(parent ? [parent.headSha] : [])];
  const isKnownCommit = input.side === "new" ? input.lineSha === candidate.headSha : leftShas.includes(input.lineSha);
  if (!isKnownCommit)
    throw new AppError(
      "VALIDATION_FAILED",
      "The line belongs to a version this review does not show. Reload the page.",
    );
  const lines = await readFileLines(deps.dataDir, {
    repository: candidate.repository,
    sha: input.lineSha,
    path: input.path,
  });
  const text = lines?.[input.line - 1];
  if (text === undefined)
    throw new AppError("VALIDATION_FAILED", "That line does not exist in this version of the file.", {
      fieldErrors: { line: ["That line does not exist in this version of the file."] },
    });
  const count = await db.reviewLineComment.count({ where: { candidateId: candidate.id } });
  if (count >= LINE_COMMENT_LIMITS.perCandidate)
    throw new AppError("VALIDATION_FAILED", `A round takes at most ${LINE_COMMENT_LIMITS.perCandidate} line comments.`);
  return db.$transaction(async (tx) => {
    const comment = await tx.reviewLineComment.create({
      data: {
        taskId: candidate.taskId,
        candidateId: candidate.id,
        round: candidate.round,
        path: input.path,
        side: input.side,
        line: input.line,
        lineSha: input.lineSha,
        lineText: text.slice(0, LINE_COMMENT_LIMITS.lineTextChars),
        body: input.body,
        authorId: actor.userId,
      },
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: "review.line_comment",
      targetType: "candidate",
      targetId: candidate.id,
      detail: { commentId: comment.id, path: input.path.slice(0, 200), side: input.side, line: input.line },
    });
    return comment;
  });
}
