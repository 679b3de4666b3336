/**
 * The fixed metadata of a candidate commit. Everything is derived from the task, so the same
 * task and tree always give the same commit SHA: the one commit recipe (candidate-commit.ts),
 * which import and rehydration share, calls this.
 * Nothing comes from the guest, a user config or the clock.
 */
import { AppError } from "../errors";
import type { TCommitMetadata } from "../git/git-commit";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

export const CANDIDATE_AUTHOR = {
  name: "School-Core student agent",
  email: "student-agent@school-core.invalid",
} as const;
export const CANDIDATE_COMMITTER = { name: "School-Core", email: "candidates@school-core.invalid" } as const;

export function assertTaskId(taskId: string): void {
  if (!UUID.test(taskId)) throw new AppError("VALIDATION_FAILED", "A task id must be a lower-case UUID.");
}

/** The candidate branch of a task: school/<taskId>. */
export function candidateBranchName(taskId: string): string {
  assertTaskId(taskId);
  return `school/${taskId}`;
}

export type TCandidateMetadataInput = {
  taskId: string;
  issueNumber: number;
  repository: string;
  taskCreatedAt: Date;
  /**
   * The review round (issue 14). Rounds after the first name it in the message, so a round whose
   * tree equals the previous round's still gets its own head SHA — and so its own candidate —
   * while round 1 keeps exactly the commit it always had.
   */
  round?: number;
};

/**
 * Author and committer are fixed School-Core identities; both dates are the task's creation time
 * in whole seconds, UTC; the message names the repository, issue and task.
 */
export function candidateCommitMetadata(input: TCandidateMetadataInput): TCommitMetadata {
  assertTaskId(input.taskId);
  const epochSeconds = Math.floor(input.taskCreatedAt.getTime() / 1000);
  const round = input.round ?? 1;
  if (!Number.isSafeInteger(round) || round < 1)
    throw new AppError("VALIDATION_FAILED", "A review round is a positive integer.");
  if (!Number.isSafeInteger(epochSeconds) || epochSeconds < 0)
    throw new AppError("VALIDATION_FAILED", "The task's creation time cannot date a commit.");
  return {
    authorName: CANDIDATE_AUTHOR.name,
    authorEmail: CANDIDATE_AUTHOR.email,
    committerName: CANDIDATE_COMMITTER.name,
    committerEmail: CANDIDATE_COMMITTER.email,
    epochSeconds,
    message: `School-Core candidate for ${input.repository}#${input.issueNumber}\n\nTask: ${input.taskId}\n${round > 1 ? `Round: ${round}\n` : ""}`,
  };
}
