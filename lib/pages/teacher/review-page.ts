/**
 * The teacher's review page (`/teacher/candidates/[id]`), read whole: the candidate with its task,
 * evidence, decision and rounds; the diff shown (the changes since the previous round by default,
 * the full diff against the base on `view: "full"`) as the page's first chunk of lines; the line
 * comments of every round; and what the decision form may offer. A diff that cannot be read is
 * shown as such and blocks approval: nobody approves unseen code. The server refuses the same
 * approvals (REVIEW_DIFF_INCOMPLETE); the view model only lets the page say so first.
 */
import type { Actor } from "../../contract/actor";
import { isAppError } from "../../errors";
import { toDiffPage } from "../../review/diff-chunks";
import { digestFilesNotShown } from "../../review/files-not-shown";
import { getCandidateReview } from "../../review/get-candidate-review";
import { listLineComments } from "../../review/list-line-comments";
import { readCandidateDiffCached } from "../../review/read-candidate-diff-cached";
import { assertMayRead, type TPageDeps } from "../page-deps";

/** A comment drawn at its line of the diff shown (the diff view's `TInlineComment`). */
export type TInlineCommentView = {
  id: string;
  path: string;
  side: "old" | "new";
  line: number;
  body: string;
  author: string;
  round: number;
  isFromEarlierRound: boolean;
};

export async function readReviewPage(
  deps: TPageDeps,
  input: { actor: Actor; candidateId: string; view?: "full" | undefined },
) {
  assertMayRead(input.actor, "review.view");
  const { db } = deps;
  const dataDir = deps.env.dataDir;
  const review = await getCandidateReview({ db }, { candidateId: input.candidateId });
  const { candidate, task, evidence, decision, rounds } = review;
  // Read through the cache the chunk route reads too (the browser fetches all but the first chunk).
  const readDiff = (baseSha: string) =>
    readCandidateDiffCached(
      { dataDir },
      { repository: candidate.repository, baseSha, headSha: candidate.headSha },
    ).catch((error) => {
      if (isAppError(error)) return { unreadable: error.message };
      throw error;
    });
  const fullDiff = await readDiff(candidate.baseSha);
  const isDiffReadable = !("unreadable" in fullDiff);
  // Revision rounds (issue 14): "changes since round N−1" (the interdiff of the two heads) by
  // default, the full diff against the base one click away; line comments of every round so far.
  const showInterdiff = rounds.parent !== null && input.view !== "full";
  const leftSha = showInterdiff ? rounds.parent!.headSha : candidate.baseSha;
  const shownDiff = showInterdiff ? await readDiff(leftSha) : fullDiff;
  const lineComments = await listLineComments({ db, dataDir }, { candidate: { ...candidate, taskId: task.id } });
  const inlineComments: TInlineCommentView[] = lineComments.flatMap((c) =>
    c.anchor && (c.anchor.side === "new" || c.anchor.leftSha === leftSha)
      ? [
          {
            id: c.id,
            path: c.path,
            side: c.anchor.side,
            line: c.anchor.line,
            body: c.body,
            author: c.author,
            round: c.round,
            isFromEarlierRound: c.round !== candidate.round,
          },
        ]
      : [],
  );
  // Files of the full diff not shown in full need the teacher's acknowledgement of exactly that list.
  const filesNotShown = isDiffReadable ? (fullDiff.diff.filesNotShown ?? []) : [];
  return {
    review,
    candidate,
    task,
    evidence,
    decision,
    rounds,
    showInterdiff,
    leftSha,
    /** only the outline and the first chunk of lines travel in the page; the diff view fetches the rest */
    shownDiff: "unreadable" in shownDiff ? shownDiff : { page: toDiffPage(shownDiff.diff, shownDiff.plan) },
    lineComments,
    inlineComments,
    isOpenForReview: candidate.isLatestRound && task.state === "review_pending" && !decision,
    canRequestChanges: task.round < rounds.maxRounds,
    notShown:
      filesNotShown.length > 0 ? { count: filesNotShown.length, digest: digestFilesNotShown(filesNotShown) } : null,
    canApprove: evidence.assessment.status === "pass" && isDiffReadable,
    approveBlockedReason: !isDiffReadable
      ? "the diff cannot be read"
      : "reasons" in evidence.assessment
        ? `evidence is ${evidence.assessment.status}: ${evidence.assessment.reasons.join("; ")}`
        : null,
  };
}

export type TReviewPage = Awaited<ReturnType<typeof readReviewPage>>;
