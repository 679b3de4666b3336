/**
 * readCandidateDiffChunk: one chunk of lines of the diff a teacher's review page shows (the page
 * sends chunk 0 itself; the browser asks for the rest, see diff-chunks.ts).
 *
 * The chunk is bound to the exact candidate the page shows: the caller names the head SHA it
 * shows and the diff's left side (the base, or the previous round's head for "changes since round
 * N"). A head that is not the candidate's, or a left side that is neither, is refused (REVIEW_STALE /
 * VALIDATION_FAILED): lines of another diff never land in the view. A candidate the teacher may
 * not see is NOT_FOUND, by the same rule as the page (getCandidateReview).
 */
import { z } from "zod";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { sliceDiffChunk, type TDiffChunk } from "./diff-chunks";
import { REVIEWABLE_TASK_STATES } from "./get-candidate-review";
import { readCandidateDiffCached } from "./read-candidate-diff-cached";

const ZSha = z.string().regex(/^[0-9a-f]{40}$/, "a full lower-case SHA-1");

/** The chunk route's query: `?head=<sha>&left=<sha>&chunk=<n>` (the candidate id is in the path). */
export const ZDiffChunkQuerySchema = z
  .object({ head: ZSha, left: ZSha, chunk: z.coerce.number().int().min(1).max(100_000) })
  .strict();

export type TReadCandidateDiffChunkInput = { candidateId: string; headSha: string; leftSha: string; index: number };

export async function readCandidateDiffChunk(
  deps: { db: Db; dataDir: string },
  input: TReadCandidateDiffChunkInput,
): Promise<TDiffChunk> {
  if (!/^cand_[0-9a-f]{32}$/.test(input.candidateId)) throw new AppError("NOT_FOUND", "No such candidate.");
  const candidate = await deps.db.candidate.findUnique({
    where: { id: input.candidateId },
    select: {
      repository: true,
      baseSha: true,
      headSha: true,
      round: true,
      parentCandidateId: true,
      task: { select: { state: true, round: true } },
    },
  });
  const isLatestRound = candidate?.round === candidate?.task.round;
  if (!candidate || (isLatestRound && !(REVIEWABLE_TASK_STATES as readonly string[]).includes(candidate.task.state)))
    throw new AppError("NOT_FOUND", "No such candidate.");
  if (candidate.headSha !== input.headSha)
    throw new AppError("REVIEW_STALE", "This page shows another head than the candidate's: reload the page.", {
      headSha: input.headSha.slice(0, 40),
    });
  const parent = candidate.parentCandidateId
    ? await deps.db.candidate.findUnique({ where: { id: candidate.parentCandidateId }, select: { headSha: true } })
    : null;
  if (input.leftSha !== candidate.baseSha && input.leftSha !== parent?.headSha)
    throw new AppError(
      "VALIDATION_FAILED",
      "The diff asked for is not one of this candidate's (its base or the previous round's head).",
    );
  const { diff, plan } = await readCandidateDiffCached(
    { dataDir: deps.dataDir },
    { repository: candidate.repository, baseSha: input.leftSha, headSha: candidate.headSha },
  );
  if (input.index >= plan.starts.length)
    throw new AppError(
      "VALIDATION_FAILED",
      `The diff has ${plan.starts.length} chunks; chunk ${input.index} does not exist.`,
    );
  return sliceDiffChunk(diff, plan, input.index);
}
