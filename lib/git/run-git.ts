/**
 * The one way School-Core runs git. Every repository we touch may hold hostile content (a
 * student's tree, a mirrored public repository), so git runs as a tool with no ambient
 * configuration at all:
 *
 * - argv only, never a shell; the environment is built from scratch (nothing inherited but PATH),
 *   so a GIT_DIR, GIT_CONFIG_* or askpass variable of the parent process cannot leak in;
 * - no system or global configuration, a private empty HOME/XDG_CONFIG_HOME, and every setting
 *   that could run a program (hooks, fsmonitor, pager, signing, credential helpers, external
 *   diff, remote transports other than local files) pinned off on the command line, which wins
 *   over any repository configuration;
 * - replace refs ignored (they would make rev-parse and diff report objects that are not there);
 * - bounded stdout (or streamed to a sink), a wall-clock timeout that kills the whole process
 *   group, and a typed GIT_FAILED error whose stderr excerpt is bounded and redacted.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import fsp from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { AppError } from "../errors";
import { sanitizeExcerpt } from "../redact";

/** git's well-known empty tree object; exists in every repository without being stored. */
export const GIT_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

const DEFAULT_TIMEOUT_MS = 120_000;
const DEFAULT_MAX_STDOUT_BYTES = 16 * 1024 * 1024;
/** stderr is only ever read for an error excerpt; the rest is dropped. */
const MAX_STDERR_BYTES = 64 * 1024;
const STDERR_EXCERPT_BYTES = 1024;

/** Identity used when a command needs one and the caller gave none (reflogs, fast-import). */
export const SCHOOL_CORE_GIT_IDENTITY = { name: "School-Core", email: "candidates@school-core.invalid" } as const;

/**
 * `-c` settings on every invocation. Command-line configuration overrides repository
 * configuration, so a repository whose config was tampered with still cannot run a hook,
 * an fsmonitor daemon, a pager, a signing program or a credential helper.
 */
const HARDENING_CONFIG: readonly string[] = [
  "core.hooksPath=/dev/null",
  "core.fsmonitor=false",
  "core.untrackedCache=false",
  "core.pager=cat",
  "core.editor=false",
  "core.askPass=",
  "core.sshCommand=false",
  "core.attributesFile=/dev/null",
  "core.excludesFile=/dev/null",
  "core.autocrlf=false",
  "core.safecrlf=false",
  "core.symlinks=true",
  "core.protectNTFS=true",
  "core.protectHFS=true",
  "core.quotePath=true",
  "commit.gpgSign=false",
  "tag.gpgSign=false",
  "push.gpgSign=false",
  "log.showSignature=false",
  "credential.helper=",
  "diff.noprefix=false",
  "diff.mnemonicPrefix=false",
  "diff.renames=false",
  "diff.algorithm=myers",
  "color.ui=false",
  "gc.auto=0",
  "maintenance.auto=false",
  "init.defaultBranch=main",
  "advice.detachedHead=false",
  "protocol.allow=never",
  "protocol.file.allow=always",
  "protocol.version=2",
  "submodule.recurse=false",
  "fetch.recurseSubmodules=false",
  "i18n.commitEncoding=UTF-8",
  "i18n.logOutputEncoding=UTF-8",
];

/** The only variables a caller may add: commit identity/dates and an alternate index. */
const ALLOWED_EXTRA_ENV = new Set([
  "GIT_AUTHOR_NAME",
  "GIT_AUTHOR_EMAIL",
  "GIT_AUTHOR_DATE",
  "GIT_COMMITTER_NAME",
  "GIT_COMMITTER_EMAIL",
  "GIT_COMMITTER_DATE",
  "GIT_INDEX_FILE",
]);

export type TGitInput = Buffer | string | AsyncIterable<Buffer | string>;

export type TRunGitOptions = {
  /** git arguments after the hardening options, e.g. ["rev-parse", "--verify", sha]. */
  args: readonly string[];
  /** Passed as --git-dir so git never discovers a repository on its own. */
  gitDir?: string;
  /** Passed as --work-tree. */
  workTree?: string;
  /** Working directory of the process (default: the private HOME, never the caller's cwd). */
  cwd?: string;
  /** Bytes for stdin; async iterables are written with backpressure. */
  input?: TGitInput;
  timeoutMs?: number;
  /** Upper bound of buffered stdout; going over kills git and fails. Ignored with onStdout. */
  maxStdoutBytes?: number;
  /** Streams stdout to the caller instead of buffering it (e.g. hashing a large diff). */
  onStdout?: (chunk: Buffer) => void;
  /** Commit identity, dates or GIT_INDEX_FILE; anything else is refused. */
  env?: Readonly<Record<string, string>>;
  /** Exit codes that are answers rather than failures (e.g. 1 for `cat-file -e`). */
  okExitCodes?: readonly number[];
  /**
   * Transports a fetch or push may use besides local files (always allowed). http/https are for the
   * publication provider; redirects are never followed (they would carry our header elsewhere).
   */
  remoteProtocols?: readonly ("file" | "http" | "https")[];
  /**
   * Config that must not appear in argv (an Authorization extra header): passed as
   * GIT_CONFIG_COUNT/KEY/VALUE, which the hardening `-c` settings still override.
   */
  secretConfig?: readonly (readonly [string, string])[];
  /**
   * Plain settings for this one command (e.g. pack.compression). Placed before the hardening
   * settings on the command line, so they can never override one of those.
   */
  config?: readonly (readonly [string, string])[];
  /** Literal secrets to scrub from any error text (in addition to pattern redaction). */
  secrets?: readonly string[];
  signal?: AbortSignal;
};

export type TGitResult = { stdout: Buffer; stderr: string; exitCode: number };

export type TGitFailureKind = "exit" | "timeout" | "output_limit" | "spawn" | "usage";

function gitError(kind: TGitFailureKind, subcommand: string, message: string, extra: Record<string, unknown> = {}): AppError {
  return new AppError("GIT_FAILED", `git ${subcommand}: ${message}`, { kind, subcommand, ...extra });
}

let privateHome: string | undefined;

/** A private, empty directory used as HOME, XDG_CONFIG_HOME and default cwd for every git process. */
function getPrivateHome(): string {
  if (privateHome && fs.existsSync(privateHome)) return privateHome;
  privateHome = fs.mkdtempSync(path.join(os.tmpdir(), "schoolcore-git-home-"));
  fs.chmodSync(privateHome, 0o700);
  return privateHome;
}

/** The complete environment of a git process. Exported for tests that prove nothing leaks in. */
export function buildGitEnv(extra: Readonly<Record<string, string>> = {}, secretConfig: readonly (readonly [string, string])[] = []): Record<string, string> {
  const home = getPrivateHome();
  for (const name of Object.keys(extra)) {
    if (!ALLOWED_EXTRA_ENV.has(name)) throw gitError("usage", "(env)", `environment variable ${name} may not be set for git`);
  }
  const configEnv: Record<string, string> = {};
  if (secretConfig.length > 0) {
    configEnv.GIT_CONFIG_COUNT = String(secretConfig.length);
    secretConfig.forEach(([key, value], index) => {
      configEnv[`GIT_CONFIG_KEY_${index}`] = key;
      configEnv[`GIT_CONFIG_VALUE_${index}`] = value;
    });
  }
  return {
    ...configEnv,
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: home,
    XDG_CONFIG_HOME: home,
    LANG: "C",
    LC_ALL: "C",
    TZ: "UTC",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_ATTR_NOSYSTEM: "1",
    GIT_TERMINAL_PROMPT: "0",
    GIT_PAGER: "cat",
    PAGER: "cat",
    GIT_NO_REPLACE_OBJECTS: "1",
    GIT_OPTIONAL_LOCKS: "0",
    GIT_PROTOCOL_FROM_USER: "0",
    GIT_AUTHOR_NAME: SCHOOL_CORE_GIT_IDENTITY.name,
    GIT_AUTHOR_EMAIL: SCHOOL_CORE_GIT_IDENTITY.email,
    GIT_COMMITTER_NAME: SCHOOL_CORE_GIT_IDENTITY.name,
    GIT_COMMITTER_EMAIL: SCHOOL_CORE_GIT_IDENTITY.email,
    ...extra,
  };
}

/** The full argv after `git`; exported so tests can assert the hardening is always present. */
export function buildGitArgv(options: Pick<TRunGitOptions, "args" | "gitDir" | "workTree" | "remoteProtocols" | "config">): string[] {
  const argv: string[] = ["--no-pager", "--no-replace-objects"];
  for (const [key, value] of options.config ?? []) {
    if (!/^[A-Za-z][A-Za-z0-9-]*(\.[^=\n]+)?\.[A-Za-z][A-Za-z0-9-]*$/.test(key) || value.includes("\n")) throw gitError("usage", "(config)", "not a plain config setting");
    argv.push("-c", `${key}=${value}`);
  }
  // Later -c settings win over earlier ones: the hardening always comes last.
  for (const setting of HARDENING_CONFIG) argv.push("-c", setting);
  for (const protocol of options.remoteProtocols ?? []) {
    if (protocol !== "file" && protocol !== "http" && protocol !== "https") throw gitError("usage", "(args)", "unknown remote protocol");
    argv.push("-c", `protocol.${protocol}.allow=always`);
  }
  argv.push("-c", "http.followRedirects=false");
  if (options.gitDir) argv.push(`--git-dir=${options.gitDir}`);
  if (options.workTree) argv.push(`--work-tree=${options.workTree}`);
  for (const arg of options.args) {
    if (arg.includes("\0")) throw gitError("usage", options.args[0] ?? "", "an argument contains a NUL byte");
  }
  argv.push(...options.args);
  return argv;
}

/** Runs one git command. Resolves on an allowed exit code; otherwise throws GIT_FAILED. */
export function runGit(options: TRunGitOptions): Promise<TGitResult> {
  const subcommand = options.args[0] ?? "";
  let argv: string[];
  let env: Record<string, string>;
  try {
    argv = buildGitArgv(options);
    env = buildGitEnv(options.env, options.secretConfig);
  } catch (error) {
    return Promise.reject(error);
  }
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const maxStdout = options.maxStdoutBytes ?? DEFAULT_MAX_STDOUT_BYTES;
  const okExitCodes = options.okExitCodes ?? [0];

  return new Promise<TGitResult>((resolve, reject) => {
    // detached: git's own children (upload-pack, pack-objects, index-pack) share its process
    // group, so a timeout can kill all of them, not just the parent.
    const child = spawn("git", argv, { cwd: options.cwd ?? getPrivateHome(), env: env as NodeJS.ProcessEnv, stdio: ["pipe", "pipe", "pipe"], detached: true, shell: false });
    const stdoutChunks: Buffer[] = [];
    let stdoutBytes = 0;
    const stderrChunks: Buffer[] = [];
    let stderrBytes = 0;
    let failure: AppError | undefined;
    let isSettled = false;

    const killGroup = () => {
      try {
        if (child.pid) process.kill(-child.pid, "SIGKILL");
      } catch {
        child.kill("SIGKILL");
      }
    };
    const timer = setTimeout(() => {
      failure ??= gitError("timeout", subcommand, `timed out after ${timeoutMs} ms`);
      killGroup();
    }, timeoutMs);
    const onAbort = () => {
      failure ??= gitError("timeout", subcommand, "was aborted");
      killGroup();
    };
    if (options.signal?.aborted) onAbort();
    options.signal?.addEventListener("abort", onAbort, { once: true });

    child.stdout.on("data", (chunk: Buffer) => {
      if (failure) return;
      if (options.onStdout) {
        try {
          options.onStdout(chunk);
        } catch (error) {
          failure = error instanceof AppError ? error : gitError("output_limit", subcommand, `output consumer failed: ${(error as Error).message}`);
          killGroup();
        }
        return;
      }
      stdoutBytes += chunk.length;
      if (stdoutBytes > maxStdout) {
        failure = gitError("output_limit", subcommand, `output exceeded ${maxStdout} bytes`);
        killGroup();
        return;
      }
      stdoutChunks.push(chunk);
    });
    child.stderr.on("data", (chunk: Buffer) => {
      if (stderrBytes >= MAX_STDERR_BYTES) return;
      const room = MAX_STDERR_BYTES - stderrBytes;
      const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
      stderrChunks.push(kept);
      stderrBytes += kept.length;
    });
    // git closing stdin early (it failed, or needed no input) is reported through its exit code.
    child.stdin.on("error", () => undefined);

    child.on("error", (error) => {
      failure ??= gitError("spawn", subcommand, `could not start git: ${sanitizeExcerpt(error.message, STDERR_EXCERPT_BYTES, options.secrets ?? [])}`);
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      if (isSettled) return;
      isSettled = true;
      const stderr = Buffer.concat(stderrChunks).toString("utf8");
      const stderrExcerpt = sanitizeExcerpt(stderr.trim(), STDERR_EXCERPT_BYTES, options.secrets ?? []);
      if (failure) {
        reject(failure);
        return;
      }
      const exitCode = code ?? -1;
      if (signal || !okExitCodes.includes(exitCode)) {
        reject(gitError("exit", subcommand, `exited with ${signal ?? exitCode}${stderrExcerpt ? `: ${stderrExcerpt}` : ""}`, { exitCode, stderr: stderrExcerpt }));
        return;
      }
      resolve({ stdout: Buffer.concat(stdoutChunks), stderr, exitCode });
    });

    writeInput(child.stdin, options.input).catch((error: unknown) => {
      failure ??= error instanceof AppError ? error : gitError("exit", subcommand, `writing input failed: ${(error as Error).message}`);
      killGroup();
    });
  });
}

async function writeInput(stdin: NodeJS.WritableStream & { destroyed?: boolean }, input: TGitInput | undefined): Promise<void> {
  if (input === undefined) {
    stdin.end();
    return;
  }
  if (typeof input === "string" || Buffer.isBuffer(input)) {
    stdin.end(input);
    return;
  }
  for await (const chunk of input) {
    if (stdin.destroyed) return;
    if (!stdin.write(chunk)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          stdin.removeListener("drain", done);
          stdin.removeListener("close", done);
          resolve();
        };
        stdin.once("drain", done);
        stdin.once("close", done);
      });
    }
  }
  stdin.end();
}

// ---------------------------------------------------------------------------------------------
// Helpers. Each takes one options object; refs and paths that come from data are passed after
// `--` or validated, so no value can be read as an option.

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
const NEUTRAL_ATTRIBUTES = "* !text !eol !crlf !diff !merge !filter !ident !working-tree-encoding !export-ignore !export-subst !whitespace !delta\n";

export async function writeNeutralAttributes(gitDir: string): Promise<void> {
  await fsp.mkdir(path.join(gitDir, "info"), { recursive: true });
  await fsp.writeFile(path.join(gitDir, "info", "attributes"), NEUTRAL_ATTRIBUTES);
}

/** Creates (or re-opens) a bare repository owned by the control plane, with neutral attributes. */
export async function initBareRepository(options: { repoPath: string }): Promise<void> {
  await fsp.mkdir(options.repoPath, { recursive: true });
  await runGit({ args: ["init", "--bare", "--quiet", "--initial-branch=main", "--", options.repoPath] });
  await writeNeutralAttributes(options.repoPath);
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
    args: ["fetch", "--quiet", "--no-tags", "--no-write-fetch-head", "--no-recurse-submodules", "--", path.resolve(options.sourceRepoPath), options.sha],
    timeoutMs: options.timeoutMs,
  });
}

/** Creates or moves a ref; with `oldSha` the update is a compare-and-set (all-zero = must not exist). */
export async function updateRef(options: { gitDir: string; ref: string; newSha: string; oldSha?: string }): Promise<void> {
  assertRefName(options.ref);
  assertSha(options.newSha, "new value");
  if (options.oldSha !== undefined && !/^[0-9a-f]{40}$/.test(options.oldSha)) throw gitError("usage", "update-ref", "old value is not a SHA");
  await runGit({ gitDir: options.gitDir, args: ["update-ref", "--no-deref", options.ref, options.newSha, ...(options.oldSha ? [options.oldSha] : [])] });
}

export async function deleteRef(options: { gitDir: string; ref: string }): Promise<void> {
  assertRefName(options.ref);
  await runGit({ gitDir: options.gitDir, args: ["update-ref", "--no-deref", "-d", options.ref] });
}

/** Adds a detached worktree at a commit (hooks are off, so post-checkout cannot run). */
export async function addWorktree(options: { gitDir: string; worktreePath: string; commit: string }): Promise<void> {
  assertSha(options.commit, "commit");
  await runGit({ gitDir: options.gitDir, args: ["worktree", "add", "--detach", "--quiet", "--", path.resolve(options.worktreePath), options.commit] });
}

/** Removes a worktree and its administrative files, even when it has changes. */
export async function removeWorktree(options: { gitDir: string; worktreePath: string }): Promise<void> {
  await runGit({ gitDir: options.gitDir, args: ["worktree", "remove", "--force", "--force", "--", path.resolve(options.worktreePath)], okExitCodes: [0, 128] });
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
  if (!Number.isSafeInteger(metadata.epochSeconds) || metadata.epochSeconds < 0) throw gitError("usage", "commit", "commit date must be whole non-negative seconds");
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
export async function commitWorktree(options: { worktreePath: string; metadata: TCommitMetadata; isEmptyAllowed?: boolean }): Promise<string> {
  const cwd = path.resolve(options.worktreePath);
  const env = commitEnv(options.metadata);
  await runGit({ cwd, args: ["add", "--all", "--force", "--", "."] });
  await runGit({
    cwd,
    env,
    args: ["commit", "--quiet", "--no-verify", "--no-gpg-sign", "--cleanup=verbatim", ...(options.isEmptyAllowed ? ["--allow-empty"] : []), "--file=-"],
    input: options.metadata.message,
  });
  const head = await runGit({ cwd, args: ["rev-parse", "--verify", "HEAD^{commit}"] });
  return head.stdout.toString("utf8").trim();
}

export type TTreeEntry = { mode: string; type: "blob" | "tree" | "commit"; sha: string; path: string };

/** Recursive listing of a tree, parsed from NUL-separated output (paths are raw, never quoted). */
export async function lsTree(options: { gitDir: string; treeish: string; maxOutputBytes?: number }): Promise<TTreeEntry[]> {
  assertRev(options.treeish, "tree-ish");
  const result = await runGit({ gitDir: options.gitDir, args: ["ls-tree", "-r", "-z", "--full-tree", options.treeish], maxStdoutBytes: options.maxOutputBytes });
  const entries: TTreeEntry[] = [];
  for (const record of splitNul(result.stdout)) {
    const tab = record.indexOf("\t");
    const [mode, type, sha] = record.slice(0, tab).split(" ");
    if (tab < 0 || !mode || !sha || (type !== "blob" && type !== "tree" && type !== "commit")) throw gitError("exit", "ls-tree", "unexpected output");
    entries.push({ mode, type, sha, path: record.slice(tab + 1) });
  }
  return entries;
}

export type TRawDiffEntry = { status: "A" | "M" | "D" | "T"; oldMode: string; newMode: string; oldSha: string; newSha: string; path: string };

/** What changed between two commits, file by file, with modes; renames are never inferred. */
export async function diffTreeRaw(options: { gitDir: string; from: string; to: string; maxOutputBytes?: number }): Promise<TRawDiffEntry[]> {
  assertSha(options.from, "from");
  assertSha(options.to, "to");
  const result = await runGit({
    gitDir: options.gitDir,
    args: ["diff-tree", "-r", "-z", "--no-renames", "--no-ext-diff", "--raw", "--full-index", "--no-commit-id", options.from, options.to, "--"],
    maxStdoutBytes: options.maxOutputBytes,
  });
  const fields = splitNul(result.stdout);
  const entries: TRawDiffEntry[] = [];
  for (let i = 0; i < fields.length; i += 2) {
    const meta = fields[i]!;
    const filePath = fields[i + 1];
    const match = /^:(\d{6}) (\d{6}) ([0-9a-f]{40}) ([0-9a-f]{40}) ([AMDT])$/.exec(meta);
    if (!match || filePath === undefined) throw gitError("exit", "diff-tree", "unexpected output");
    entries.push({ oldMode: match[1]!, newMode: match[2]!, oldSha: match[3]!, newSha: match[4]!, status: match[5] as TRawDiffEntry["status"], path: filePath });
  }
  return entries;
}

/** The canonical binary diff between two commits, streamed to `onChunk` (it can be large). */
export async function streamBinaryDiff(options: { gitDir: string; from: string; to: string; onChunk: (chunk: Buffer) => void; timeoutMs?: number }): Promise<void> {
  assertSha(options.from, "from");
  assertSha(options.to, "to");
  await runGit({
    gitDir: options.gitDir,
    args: ["diff", "--binary", "--full-index", "--no-color", "--no-ext-diff", "--no-textconv", "--no-renames", "--src-prefix=a/", "--dst-prefix=b/", options.from, options.to, "--"],
    onStdout: options.onChunk,
    timeoutMs: options.timeoutMs,
  });
}

/** Writes a tar of a tree to a file (attributes are neutral in repositories we initialised). */
export async function archiveTree(options: { gitDir: string; treeish: string; outputPath: string; timeoutMs?: number }): Promise<void> {
  assertRev(options.treeish, "tree-ish");
  await runGit({ gitDir: options.gitDir, args: ["archive", "--format=tar", `--output=${path.resolve(options.outputPath)}`, options.treeish], timeoutMs: options.timeoutMs });
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
