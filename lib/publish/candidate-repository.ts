/**
 * Where an imported candidate's commit lives: the operator-owned bare repository
 * DATA_DIR/candidates/<owner>__<name>.git, on branch school/<taskId> at the candidate's head SHA.
 * Publication pushes from here and nowhere else, and checks the commit before it does.
 */
import fs from "node:fs/promises";
import { candidateRepoPathFor } from "../candidate/candidate-repository";
import { hasCommit, isFullSha, revParse, runGit } from "../git/run-git";

/** The one naming convention, owned by lib/candidate (which writes these repositories). */
export function candidateGitDir(dataDir: string, repository: string): string {
  return candidateRepoPathFor(dataDir, repository);
}

export type TCandidateCommitCheck = { kind: "ok" } | { kind: "mismatch"; reason: string };

/**
 * The candidate repository must hold headSha as a commit descending from baseSha, and if the
 * candidate branch exists it must point at headSha. Anything else means the repository no longer
 * matches the immutable candidate record: fail closed rather than push something unreviewed.
 */
export async function checkCandidateCommit(input: { gitDir: string; branch: string; baseSha: string; headSha: string }): Promise<TCandidateCommitCheck> {
  if (!isFullSha(input.headSha) || !isFullSha(input.baseSha)) return { kind: "mismatch", reason: "The candidate's SHAs are not full SHA-1s." };
  const exists = await fs.stat(input.gitDir).then(() => true, () => false);
  if (!exists || !(await hasCommit({ gitDir: input.gitDir, sha: input.headSha }))) return { kind: "mismatch", reason: "The candidate repository does not hold the approved head commit." };
  const ancestry = await runGit({ gitDir: input.gitDir, args: ["merge-base", "--is-ancestor", input.baseSha, input.headSha], okExitCodes: [0, 1, 128], timeoutMs: 15_000 });
  if (ancestry.exitCode !== 0) return { kind: "mismatch", reason: "The approved head commit does not descend from the candidate's base SHA." };
  const branch = await revParse({ gitDir: input.gitDir, rev: `refs/heads/${input.branch}`, peelTo: "commit" });
  if (branch !== null && branch !== input.headSha) return { kind: "mismatch", reason: "The candidate branch in the candidate repository has moved away from the approved head SHA." };
  return { kind: "ok" };
}
