/**
 * Typed git plumbing on top of the one runner (run-git.ts): repository setup with neutral
 * attributes, revisions, refs, fetch by SHA, worktrees, deterministic commits, tree listings,
 * raw and binary diffs, archives and fast-import. Each helper takes one options object; refs and
 * paths that come from data are passed after `--` or validated first, so no value can be read as
 * an option, and output is parsed from NUL-separated records (a path that is not UTF-8 fails
 * closed instead of being mangled).
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fsp from "node:fs/promises";
import path from "node:path";
import { gitError, runGit } from "./run-git";

/** git's well-known empty tree object; exists in every repository without being stored. */
export const GIT_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

const SHA_PATTERN = /^[0-9a-f]{40}$/;
const SAFE_REV_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._/^{}~@-]*$/;

export function isFullSha(value: string): boolean {
  return SHA_PATTERN.test(value);
}

function assertSha(value: string, what: string): void {
  if (!isFullSha(value)) throw gitError("usage", "(args)", `${what} is not a full lower-case SHA-1`);
}

function assertRev(value: string, what: string): void {
  if (!SAFE_REV_PATTERN.test(value) || value.includes("..")) throw gitError("usage", "(args)", `${what} is not a plain revision`);
}

/** Refs we create: refs/heads/school/<id> and friends; no "..", no option-looking values. */
export function assertRefName(ref: string): void {
  if (!/^refs\/[A-Za-z0-9._/-]+$/.test(ref) || ref.includes("..") || ref.includes("//") || ref.endsWith("/") || ref.endsWith(".lock")) {
    throw gitError("usage", "(args)", "not an acceptable ref name");
  }
}

/**
 * Attributes that could change bytes (eol, filters, ident, encodings) or hide files from an
 * archive (export-ignore/export-subst) are set to "unspecified" for every path. info/attributes
 * outranks every in-tree .gitattributes, so a hostile tree cannot re-enable them.
 */
const NEUTRAL_ATTRIBUTES =
  "* !text !eol !crlf !diff !merge !filter !ident !working-tree-encoding !export-ignore !export-subst !whitespace !delta\n";

/**
 * Makes info/attributes neutral. It is checked on every import, so it is written only when it
 * differs, to a private name renamed over: several processes may write it at once.
 */
export async function writeNeutralAttributes(gitDir: string): Promise<void> {
  const infoDir = path.join(gitDir, "info");
  const current = await fsp.readFile(path.join(infoDir, "attributes"), "utf8").catch(() => null);
  if (current === NEUTRAL_ATTRIBUTES) return;
  await fsp.mkdir(infoDir, { recursive: true });
  const staging = path.join(infoDir, `.attributes-${randomBytes(6).toString("hex")}`);
  try {
    await fsp.writeFile(staging, NEUTRAL_ATTRIBUTES, { flag: "wx" });
    await fsp.rename(staging, path.join(infoDir, "attributes"));
  } finally {
    await fsp.rm(staging, { force: true });
  }
}

const isGitDirAt = (repoPath: string) =>
  fsp.stat(path.join(repoPath, "HEAD")).then(
    (stat) => stat.isFile(),
    () => false,
  );

/**
 * Creates a bare repository owned by the control plane, with neutral attributes, or re-opens one.
 * Safe when several processes do it at once (two workers importing the first candidates of one
 * repository did, issue 16): an existing repository is never re-initialised (`git init` takes its
 * config lock, and a concurrent init then fails on it), and a new one is made in a private sibling
 * directory and renamed into place, so nobody sees it half-made; when another process's rename
 * wins, theirs is used.
 */
export async function initBareRepository(options: { repoPath: string }): Promise<void> {
  const { repoPath } = options;
  if (!(await isGitDirAt(repoPath))) {
    // DATA_DIR/mirrors and DATA_DIR/candidates hold every target repository and candidate: owner-only.
    await fsp.mkdir(path.dirname(repoPath), { recursive: true, mode: 0o700 });
    const staging = `${repoPath}.init-${randomBytes(6).toString("hex")}`;
    try {
      await runGit({ args: ["init", "--bare", "--quiet", "--initial-branch=main", "--", staging] });
      await writeNeutralAttributes(staging);
      // Replaces nothing but an empty directory (what an interrupted older start left).
      await fsp.rename(staging, repoPath).catch(async (error: NodeJS.ErrnoException) => {
        const isTaken = error.code === "ENOTEMPTY" || error.code === "EEXIST";
        if (!isTaken) throw error;
        if (!(await isGitDirAt(repoPath)))
          throw gitError("usage", "init", "the repository path exists, is not empty and is not a git repository");
      });
    } finally {
      await fsp.rm(staging, { recursive: true, force: true });
    }
  }
  await writeNeutralAttributes(repoPath);
}

/**
 * Full SHA of a revision, or null when it does not resolve. Always peels (to `object` by default):
 * a bare 40-hex argument would otherwise be echoed back even when no such object exists.
 */
export async function revParse(options: { gitDir: string; rev: string; peelTo?: "commit" | "tree" | "object" }): Promise<string | null> {
  assertRev(options.rev, "revision");
  const spec = `${options.rev}^{${options.peelTo ?? "object"}}`;
  const result = await runGit({ gitDir: options.gitDir, args: ["rev-parse", "--verify", "--quiet", spec], okExitCodes: [0, 1, 128] });
  const sha = result.stdout.toString("utf8").trim();
  return result.exitCode === 0 && isFullSha(sha) ? sha : null;
}

/** Whether the repository holds a commit with this exact SHA. */
export async function hasCommit(options: { gitDir: string; sha: string }): Promise<boolean> {
  assertSha(options.sha, "commit");
  const result = await runGit({ gitDir: options.gitDir, args: ["cat-file", "-e", `${options.sha}^{commit}`], okExitCodes: [0, 1, 128] });
  return result.exitCode === 0;
}

/** Copies one commit (and its history) from a local repository, by SHA, with no tags or refs. */
export async function fetchCommit(options: { gitDir: string; sourceRepoPath: string; sha: string; timeoutMs?: number }): Promise<void> {
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
export async function updateRef(options: { gitDir: string; ref: string; newSha: string; oldSha?: string }): Promise<void> {
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

export type TTreeEntry = { mode: string; type: "blob" | "tree" | "commit"; sha: string; path: string };

/** Recursive listing of a tree, parsed from NUL-separated output (paths are raw, never quoted). */
export async function lsTree(options: { gitDir: string; treeish: string; maxOutputBytes?: number }): Promise<TTreeEntry[]> {
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

export type TRawDiffEntry = {
  status: "A" | "M" | "D" | "T";
  oldMode: string;
  newMode: string;
  oldSha: string;
  newSha: string;
  path: string;
};

/** What changed between two commits, file by file, with modes; renames are never inferred. */
export async function diffTreeRaw(options: {
  gitDir: string;
  from: string;
  to: string;
  maxOutputBytes?: number;
}): Promise<TRawDiffEntry[]> {
  assertSha(options.from, "from");
  assertSha(options.to, "to");
  const result = await runGit({
    gitDir: options.gitDir,
    args: [
      "diff-tree",
      "-r",
      "-z",
      "--no-renames",
      "--no-ext-diff",
      "--raw",
      "--full-index",
      "--no-commit-id",
      options.from,
      options.to,
      "--",
    ],
    maxStdoutBytes: options.maxOutputBytes,
  });
  const fields = splitNul(result.stdout);
  const entries: TRawDiffEntry[] = [];
  for (let i = 0; i < fields.length; i += 2) {
    const meta = fields[i]!;
    const filePath = fields[i + 1];
    const match = /^:(\d{6}) (\d{6}) ([0-9a-f]{40}) ([0-9a-f]{40}) ([AMDT])$/.exec(meta);
    if (!match || filePath === undefined) throw gitError("exit", "diff-tree", "unexpected output");
    entries.push({
      oldMode: match[1]!,
      newMode: match[2]!,
      oldSha: match[3]!,
      newSha: match[4]!,
      status: match[5] as TRawDiffEntry["status"],
      path: filePath,
    });
  }
  return entries;
}

/**
 * sha256 (hex) of git's canonical binary diff between two commits. The diff goes from git
 * straight into `sha256sum` through a pipe between the two processes: at a 200 MB candidate it is
 * a quarter of a gigabyte that would otherwise pass through this process in pipe-sized buffers
 * (the import's added memory grew with it, issue 16).
 */
export async function digestBinaryDiff(options: { gitDir: string; from: string; to: string; timeoutMs?: number }): Promise<string> {
  assertSha(options.from, "from");
  assertSha(options.to, "to");
  const hasherEnv: Record<string, string> = { PATH: process.env.PATH ?? "/usr/bin:/bin" };
  const hasher = spawn("sha256sum", ["-b", "-"], { stdio: "pipe", env: hasherEnv as NodeJS.ProcessEnv });
  const hasherSpawned = new Promise<void>((resolve, reject) => {
    hasher.once("spawn", resolve);
    hasher.once("error", (error) => reject(gitError("spawn", "diff", `could not start sha256sum: ${error.message}`)));
  });
  let output = "";
  hasher.stdout.setEncoding("utf8").on("data", (text: string) => (output = (output + text).slice(0, 256)));
  hasher.stderr.resume();
  const hasherDone = new Promise<number | null>((resolve) => hasher.once("close", (code) => resolve(code)));
  try {
    await hasherSpawned;
    const diff = runGit({
      gitDir: options.gitDir,
      args: [
        "diff",
        "--binary",
        "--full-index",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-renames",
        "--src-prefix=a/",
        "--dst-prefix=b/",
        options.from,
        options.to,
        "--",
      ],
      stdoutTo: hasher.stdin,
      timeoutMs: options.timeoutMs,
    });
    // git has its own copy of the pipe now: closing ours lets sha256sum see the end when git exits.
    hasher.stdin.destroy();
    await diff;
  } catch (error) {
    hasher.kill("SIGKILL");
    throw error;
  }
  const code = await hasherDone;
  const digest = /^([0-9a-f]{64}) /.exec(output)?.[1];
  if (code !== 0 || !digest) throw gitError("exit", "diff", `sha256sum of the diff failed (exit ${code})`);
  return digest;
}

/** Writes a tar of a tree to a file (attributes are neutral in repositories we initialised). */
export async function archiveTree(options: { gitDir: string; treeish: string; outputPath: string; timeoutMs?: number }): Promise<void> {
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

const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true });

/** Splits NUL-terminated records; a path that is not UTF-8 fails closed instead of being mangled. */
function splitNul(buffer: Buffer): string[] {
  const parts: string[] = [];
  let start = 0;
  while (start < buffer.length) {
    let end = buffer.indexOf(0, start);
    if (end < 0) end = buffer.length;
    try {
      parts.push(STRICT_UTF8.decode(buffer.subarray(start, end)));
    } catch {
      throw gitError("exit", "(output)", "git reported a path that is not valid UTF-8");
    }
    start = end + 1;
  }
  return parts;
}
