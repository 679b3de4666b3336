/**
 * The candidate repository and every git operation on it: where it lives, how import prepares
 * it, and the check publication makes before it pushes from it. The operator-owned bare
 * repository DATA_DIR/candidates/<owner>__<name>.git holds branch school/<taskId> at the
 * candidate's head SHA; the base always comes from the control plane's own mirror
 * (lib/repos/mirror.ts). Neither is ever the guest's git.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { AppError } from "../errors";
import { initBareRepository } from "../git/git-bare-repository";
import { fetchCommit, hasCommit, revParse, updateRef } from "../git/git-plumbing";
import { isFullSha, ZERO_SHA } from "../git/git-values";
import { runGit } from "../git/run-git";
import { refusal } from "./archive-refusals";
import type { TGitlink } from "./build-candidate-commit";
import type { TValidatedEntry } from "./tar-validator";

const REPOSITORY_NAME = /^([a-z0-9_][a-z0-9_.-]*)\/([a-z0-9_][a-z0-9_.-]*)$/;
const GITLINK_PREFIX = Buffer.from("160000 commit ", "latin1");

function repositoryDirName(repository: string): string {
  const match = REPOSITORY_NAME.exec(repository);
  if (!match || repository.includes(".."))
    throw new AppError("VALIDATION_FAILED", "A repository must be a canonical lower-case owner/name.");
  return `${match[1]}__${match[2]}.git`;
}

/** The one naming convention: lib/candidate writes these repositories, verification, review and publication read them. */
export function candidateRepoPathFor(dataDir: string, repository: string): string {
  return path.join(dataDir, "candidates", repositoryDirName(repository));
}

/** Opens the candidate repository, creating it (bare, neutral attributes) on first use. */
export async function ensureBareRepository(repoPath: string): Promise<void> {
  const isPresent = await fs.stat(path.join(repoPath, "HEAD")).then(
    () => true,
    () => false,
  );
  if (isPresent) {
    const bare = await runGit({ gitDir: repoPath, args: ["rev-parse", "--is-bare-repository"] });
    if (bare.stdout.toString("utf8").trim() !== "true")
      throw new AppError("CONFIG_INVALID", "The candidate repository path is not a bare repository.");
  }
  // An existing repository is re-opened, not re-initialised; info/attributes is rewritten.
  await initBareRepository({ repoPath });
}

/** Makes the base commit present in `gitDir`, copied by SHA from the control plane's mirror. */
export async function bringBaseCommit(options: { gitDir: string; mirrorPath: string; baseSha: string }): Promise<void> {
  if (await hasCommit({ gitDir: options.gitDir, sha: options.baseSha })) return;
  const isMirrorPresent = await fs.stat(options.mirrorPath).then(
    (s) => s.isDirectory(),
    () => false,
  );
  if (!isMirrorPresent || !(await hasCommit({ gitDir: options.mirrorPath, sha: options.baseSha }))) {
    throw new AppError("BASE_UNAVAILABLE", "The base commit is not in the control plane's mirror.", {
      baseSha: options.baseSha,
    });
  }
  await fetchCommit({
    gitDir: options.gitDir,
    sourceRepoPath: options.mirrorPath,
    sha: options.baseSha,
    timeoutMs: 10 * 60_000,
  });
}

/**
 * Submodule links of the base. An archive cannot express them, so they are carried over as they
 * are; archive content at or beneath one would be a second, conflicting claim on that path.
 */
export async function readBaseGitlinks(options: {
  gitDir: string;
  baseSha: string;
  entries: readonly TValidatedEntry[];
}): Promise<TGitlink[]> {
  const gitlinks = await listGitlinks(options.gitDir, options.baseSha);
  if (gitlinks.length === 0) return gitlinks;
  const linkPaths = new Set(gitlinks.map((g) => g.path));
  const refusals = [];
  for (const entry of options.entries) {
    const components = entry.path.split("/");
    for (let i = 1; i <= components.length; i++) {
      if (linkPaths.has(components.slice(0, i).join("/"))) {
        refusals.push(refusal("ARCHIVE_PATH_CONFLICT", "inside a submodule of the base", entry.path));
        break;
      }
    }
    if (refusals.length >= 20) break;
  }
  if (refusals.length > 0)
    throw new AppError("ARCHIVE_REFUSED", `The archive was refused: ${refusals[0]!.message}`, { reasons: refusals });
  return gitlinks;
}

/**
 * Streams `ls-tree -r` and keeps only submodule links, so a base of any size costs no memory
 * beyond one record. Records are "<mode> <type> <sha>\t<path>\0".
 */
async function listGitlinks(gitDir: string, baseSha: string): Promise<TGitlink[]> {
  const gitlinks: TGitlink[] = [];
  let pending = Buffer.alloc(0);
  const take = (record: Buffer) => {
    if (!record.subarray(0, 14).equals(GITLINK_PREFIX)) return;
    const tab = record.indexOf(0x09);
    const sha = record.subarray(14, tab).toString("latin1");
    if (tab !== 54 || !/^[0-9a-f]{40}$/.test(sha))
      throw new AppError("GIT_FAILED", "Unexpected ls-tree output for a submodule link.");
    gitlinks.push({ path: record.subarray(tab + 1).toString("utf8"), sha });
  };
  await runGit({
    gitDir,
    args: ["ls-tree", "-r", "-z", "--full-tree", baseSha],
    timeoutMs: 10 * 60_000,
    onStdout: (chunk) => {
      let data = pending.length > 0 ? Buffer.concat([pending, chunk]) : chunk;
      let nul = data.indexOf(0);
      while (nul >= 0) {
        take(data.subarray(0, nul));
        data = data.subarray(nul + 1);
        nul = data.indexOf(0);
      }
      pending = Buffer.from(data);
    },
  });
  if (pending.length > 0) take(pending);
  return gitlinks;
}

/**
 * Points school/<taskId> at the head: created if absent (compare-and-set against "absent"),
 * accepted if it already points there (a retried import), a conflict otherwise.
 */
export async function createOrVerifyBranch(options: {
  gitDir: string;
  branch: string;
  headSha: string;
  previousHeadSha?: string;
}): Promise<void> {
  const ref = `refs/heads/${options.branch}`;
  // A revision round moves the branch from the previous round's head, compare-and-set: the
  // branch follows the task's latest round, and never jumps from anything else. Tried first (one
  // git process in the usual case); a refused compare is then judged from what the branch holds.
  const expected = options.previousHeadSha ?? null;
  try {
    await updateRef({ gitDir: options.gitDir, ref, newSha: options.headSha, oldSha: expected ?? ZERO_SHA });
    return;
  } catch (error) {
    const existing = await revParse({ gitDir: options.gitDir, rev: ref, peelTo: "commit" });
    // a retried import, or another import of the same task that won the race with the same head
    if (existing === options.headSha) return;
    if (existing !== expected)
      throw new AppError("STATE_CONFLICT", "The candidate branch already points at a different commit.", {
        branch: options.branch,
      });
    throw error;
  }
}

/** refs/school-rounds/<taskId>/<round>: keeps every round's head reachable after the branch moved on. */
export function roundRefName(taskId: string, round: number): string {
  if (!/^[0-9a-f-]{36}$/.test(taskId) || !Number.isSafeInteger(round) || round < 1)
    throw new AppError("VALIDATION_FAILED", "A round ref needs a task id and a positive round.");
  return `refs/school-rounds/${taskId}/${round}`;
}

/** Pins a round's head under its round ref: created once, accepted again at the same head, a conflict otherwise. */
export async function pinRoundRef(options: {
  gitDir: string;
  taskId: string;
  round: number;
  headSha: string;
}): Promise<void> {
  const ref = roundRefName(options.taskId, options.round);
  try {
    await updateRef({ gitDir: options.gitDir, ref, newSha: options.headSha, oldSha: ZERO_SHA });
  } catch (error) {
    const existing = await revParse({ gitDir: options.gitDir, rev: ref, peelTo: "commit" });
    if (existing === options.headSha) return;
    if (existing !== null)
      throw new AppError("STATE_CONFLICT", `Round ${options.round} of this task already has another head.`);
    throw error;
  }
}

export type TCandidateCommitCheck = { kind: "ok" } | { kind: "mismatch"; reason: string };

/**
 * Before publication pushes: the candidate repository must hold headSha as a commit descending
 * from baseSha, and if the candidate branch exists it must point at headSha. Anything else means
 * the repository no longer matches the immutable candidate record: fail closed rather than push
 * something unreviewed.
 */
export async function checkCandidateCommit(input: {
  gitDir: string;
  branch: string;
  baseSha: string;
  headSha: string;
}): Promise<TCandidateCommitCheck> {
  if (!isFullSha(input.headSha) || !isFullSha(input.baseSha))
    return { kind: "mismatch", reason: "The candidate's SHAs are not full SHA-1s." };
  const exists = await fs.stat(input.gitDir).then(
    () => true,
    () => false,
  );
  if (!exists) return { kind: "mismatch", reason: "The candidate repository does not hold the approved head commit." };
  // Three independent reads of one repository, run together and judged in order.
  const [hasHead, ancestry, branch] = await Promise.all([
    hasCommit({ gitDir: input.gitDir, sha: input.headSha }),
    runGit({
      gitDir: input.gitDir,
      args: ["merge-base", "--is-ancestor", input.baseSha, input.headSha],
      okExitCodes: [0, 1, 128],
      timeoutMs: 15_000,
    }),
    revParse({ gitDir: input.gitDir, rev: `refs/heads/${input.branch}`, peelTo: "commit" }),
  ]);
  if (!hasHead) return { kind: "mismatch", reason: "The candidate repository does not hold the approved head commit." };
  if (ancestry.exitCode !== 0)
    return { kind: "mismatch", reason: "The approved head commit does not descend from the candidate's base SHA." };
  if (branch !== null && branch !== input.headSha)
    return {
      kind: "mismatch",
      reason: "The candidate branch in the candidate repository has moved away from the approved head SHA.",
    };
  return { kind: "ok" };
}
