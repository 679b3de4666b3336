/**
 * Typed git plumbing on top of the one runner (run-git.ts): revisions, refs, fetch by SHA,
 * worktrees, tree listings, archives and fast-import. Each helper takes one options object; values
 * from data are checked first (git-values.ts) or passed after `--`, so none can be read as an
 * option. Beside it: repository creation (git-bare-repository.ts), deterministic commits
 * (git-commit.ts) and diffs between commits (git-diff.ts).
 */
import fsp from "node:fs/promises";
import path from "node:path";
import { gitError, runGit } from "./run-git";
import { assertRefName, assertRev, assertSha, isFullSha, splitNul } from "./git-values";

/** git's well-known empty tree object; exists in every repository without being stored. */
export const GIT_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/**
 * Full SHA of a revision, or null when it does not resolve. Always peels (to `object` by default):
 * a bare 40-hex argument would otherwise be echoed back even when no such object exists.
 */
export async function revParse(options: {
  gitDir: string;
  rev: string;
  peelTo?: "commit" | "tree" | "object";
}): Promise<string | null> {
  assertRev(options.rev, "revision");
  const spec = `${options.rev}^{${options.peelTo ?? "object"}}`;
  const result = await runGit({
    gitDir: options.gitDir,
    args: ["rev-parse", "--verify", "--quiet", spec],
    okExitCodes: [0, 1, 128],
  });
  const sha = result.stdout.toString("utf8").trim();
  return result.exitCode === 0 && isFullSha(sha) ? sha : null;
}

/** Whether the repository holds a commit with this exact SHA. */
export async function hasCommit(options: { gitDir: string; sha: string }): Promise<boolean> {
  assertSha(options.sha, "commit");
  const result = await runGit({
    gitDir: options.gitDir,
    args: ["cat-file", "-e", `${options.sha}^{commit}`],
    okExitCodes: [0, 1, 128],
  });
  return result.exitCode === 0;
}

/** Copies one commit (and its history) from a local repository, by SHA, with no tags or refs. */
export async function fetchCommit(options: {
  gitDir: string;
  sourceRepoPath: string;
  sha: string;
  timeoutMs?: number;
}): Promise<void> {
  assertSha(options.sha, "commit");
  await runGit({
    gitDir: options.gitDir,
    args: [
      "fetch",
      "--quiet",
      "--no-tags",
      "--no-write-fetch-head",
      "--no-recurse-submodules",
      "--",
      path.resolve(options.sourceRepoPath),
      options.sha,
    ],
    timeoutMs: options.timeoutMs,
  });
}

/** Creates or moves a ref; with `oldSha` the update is a compare-and-set (all-zero = must not exist). */
export async function updateRef(options: {
  gitDir: string;
  ref: string;
  newSha: string;
  oldSha?: string;
}): Promise<void> {
  assertRefName(options.ref);
  assertSha(options.newSha, "new value");
  if (options.oldSha !== undefined && !/^[0-9a-f]{40}$/.test(options.oldSha))
    throw gitError("usage", "update-ref", "old value is not a SHA");
  await runGit({
    gitDir: options.gitDir,
    args: ["update-ref", "--no-deref", options.ref, options.newSha, ...(options.oldSha ? [options.oldSha] : [])],
  });
}

export async function deleteRef(options: { gitDir: string; ref: string }): Promise<void> {
  assertRefName(options.ref);
  await runGit({ gitDir: options.gitDir, args: ["update-ref", "--no-deref", "-d", options.ref] });
}

/** Adds a detached worktree at a commit (hooks are off, so post-checkout cannot run). */
export async function addWorktree(options: { gitDir: string; worktreePath: string; commit: string }): Promise<void> {
  assertSha(options.commit, "commit");
  await runGit({
    gitDir: options.gitDir,
    args: ["worktree", "add", "--detach", "--quiet", "--", path.resolve(options.worktreePath), options.commit],
  });
}

/** Removes a worktree and its administrative files, even when it has changes. */
export async function removeWorktree(options: { gitDir: string; worktreePath: string }): Promise<void> {
  await runGit({
    gitDir: options.gitDir,
    args: ["worktree", "remove", "--force", "--force", "--", path.resolve(options.worktreePath)],
    okExitCodes: [0, 128],
  });
  await fsp.rm(options.worktreePath, { recursive: true, force: true });
  await runGit({ gitDir: options.gitDir, args: ["worktree", "prune"] });
}

export type TTreeEntry = { mode: string; type: "blob" | "tree" | "commit"; sha: string; path: string };

/** Recursive listing of a tree, parsed from NUL-separated output (paths are raw, never quoted). */
export async function lsTree(options: {
  gitDir: string;
  treeish: string;
  maxOutputBytes?: number;
}): Promise<TTreeEntry[]> {
  assertRev(options.treeish, "tree-ish");
  const result = await runGit({
    gitDir: options.gitDir,
    args: ["ls-tree", "-r", "-z", "--full-tree", options.treeish],
    maxStdoutBytes: options.maxOutputBytes,
  });
  const entries: TTreeEntry[] = [];
  for (const record of splitNul(result.stdout)) {
    const tab = record.indexOf("\t");
    const [mode, type, sha] = record.slice(0, tab).split(" ");
    if (tab < 0 || !mode || !sha || (type !== "blob" && type !== "tree" && type !== "commit"))
      throw gitError("exit", "ls-tree", "unexpected output");
    entries.push({ mode, type, sha, path: record.slice(tab + 1) });
  }
  return entries;
}

/** Writes a tar of a tree to a file (attributes are neutral in repositories we initialised). */
export async function archiveTree(options: {
  gitDir: string;
  treeish: string;
  outputPath: string;
  timeoutMs?: number;
}): Promise<void> {
  assertRev(options.treeish, "tree-ish");
  await runGit({
    gitDir: options.gitDir,
    args: ["archive", "--format=tar", `--output=${path.resolve(options.outputPath)}`, options.treeish],
    timeoutMs: options.timeoutMs,
  });
}

/**
 * Runs `git fast-import` on a stream of commands. fast-import writes objects and refs without a
 * worktree, an index, attributes, ignore rules or hooks, so bytes go into blobs unchanged.
 */
export async function runFastImport(options: {
  gitDir: string;
  input: AsyncIterable<Buffer | string>;
  timeoutMs?: number;
  env?: Readonly<Record<string, string>>;
  /**
   * Skip fast-import's delta attempts (it only tries the previous blob of the stream, which for
   * a snapshot is an unrelated file) and compress at level 1 like git's loose objects: the same
   * objects and SHAs, without the CPU; a later repack finds the real deltas.
   */
  isFast?: boolean;
}): Promise<void> {
  await runGit({
    gitDir: options.gitDir,
    args: ["fast-import", "--quiet", "--done", "--date-format=raw", ...(options.isFast ? ["--depth=0"] : [])],
    config: options.isFast ? [["pack.compression", "1"]] : [],
    input: options.input,
    timeoutMs: options.timeoutMs,
    env: options.env,
  });
}
