/**
 * Deterministic commits of trees the control plane wrote itself: fixed author, committer and
 * date, so the same inputs give the same SHA; no hooks, no signing.
 */
import path from "node:path";
import { gitError, runGit } from "./run-git";

/** Fixed commit metadata: same inputs, same commit SHA. Dates are whole seconds, UTC. */
export type TCommitMetadata = {
  authorName: string;
  authorEmail: string;
  committerName: string;
  committerEmail: string;
  epochSeconds: number;
  message: string;
};

export function commitEnv(metadata: TCommitMetadata): Record<string, string> {
  if (!Number.isSafeInteger(metadata.epochSeconds) || metadata.epochSeconds < 0)
    throw gitError("usage", "commit", "commit date must be whole non-negative seconds");
  // "@" marks a raw epoch; without it git rejects small values as an unknown date format.
  const date = `@${metadata.epochSeconds} +0000`;
  return {
    GIT_AUTHOR_NAME: metadata.authorName,
    GIT_AUTHOR_EMAIL: metadata.authorEmail,
    GIT_AUTHOR_DATE: date,
    GIT_COMMITTER_NAME: metadata.committerName,
    GIT_COMMITTER_EMAIL: metadata.committerEmail,
    GIT_COMMITTER_DATE: date,
  };
}

/**
 * Stages everything in a worktree and commits it with fixed metadata, no hooks and no signing.
 * For trees the control plane wrote itself: `git add` honours in-tree .gitignore, so hostile
 * trees are imported with fast-import instead (see lib/candidate/build-candidate-commit.ts).
 */
export async function commitWorktree(options: {
  worktreePath: string;
  metadata: TCommitMetadata;
  isEmptyAllowed?: boolean;
}): Promise<string> {
  const cwd = path.resolve(options.worktreePath);
  const env = commitEnv(options.metadata);
  await runGit({ cwd, args: ["add", "--all", "--force", "--", "."] });
  await runGit({
    cwd,
    env,
    args: [
      "commit",
      "--quiet",
      "--no-verify",
      "--no-gpg-sign",
      "--cleanup=verbatim",
      ...(options.isEmptyAllowed ? ["--allow-empty"] : []),
      "--file=-",
    ],
    input: options.metadata.message,
  });
  const head = await runGit({ cwd, args: ["rev-parse", "--verify", "HEAD^{commit}"] });
  return head.stdout.toString("utf8").trim();
}
