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
 *
 * This file is the runner only; the typed helpers built on it (rev-parse, ls-tree, fetch by SHA,
 * worktrees, fast-import …) are in git-plumbing.ts, with repository creation, commits and diffs in
 * git-bare-repository.ts, git-commit.ts and git-diff.ts.
 */
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { finished } from "node:stream/promises";
import { AppError } from "../errors";
import { sanitizeExcerpt } from "../redact";
import { launchProcess, type TLaunchedProcess } from "../system/process-launcher";

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
  /** Streams stdout to the caller instead of buffering it. */
  onStdout?: (chunk: Buffer) => void;
  /**
   * Gives git's stdout to another launched process's held stdin (a pipe, e.g. sha256sum's), so the
   * bytes never pass through this process; its stdout is then neither buffered nor streamed here.
   */
  stdoutTo?: TLaunchedProcess;
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

/** The one GIT_FAILED error shape, for the runner and the typed helpers built on it. */
export function gitError(
  kind: TGitFailureKind,
  subcommand: string,
  message: string,
  extra: Record<string, unknown> = {},
): AppError {
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
export function buildGitEnv(
  extra: Readonly<Record<string, string>> = {},
  secretConfig: readonly (readonly [string, string])[] = [],
): Record<string, string> {
  const home = getPrivateHome();
  for (const name of Object.keys(extra)) {
    if (!ALLOWED_EXTRA_ENV.has(name))
      throw gitError("usage", "(env)", `environment variable ${name} may not be set for git`);
  }
  const configEnv: Record<string, string> = {};
  for (const [key] of secretConfig) {
    // A credential header is scoped to one URL (`http.<url>.extraHeader`): a global one would be
    // sent to whatever host a fetch or a redirect reaches (issue 12, item 10).
    if (key.toLowerCase() === "http.extraheader")
      throw gitError(
        "usage",
        "(config)",
        "a global http.extraHeader may not be set; scope it as http.<url>.extraHeader",
      );
  }
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
export function buildGitArgv(
  options: Pick<TRunGitOptions, "args" | "gitDir" | "workTree" | "remoteProtocols" | "config">,
): string[] {
  const argv: string[] = ["--no-pager", "--no-replace-objects"];
  for (const [key, value] of options.config ?? []) {
    if (!/^[A-Za-z][A-Za-z0-9-]*(\.[^=\n]+)?\.[A-Za-z][A-Za-z0-9-]*$/.test(key) || value.includes("\n"))
      throw gitError("usage", "(config)", "not a plain config setting");
    argv.push("-c", `${key}=${value}`);
  }
  // Later -c settings win over earlier ones: the hardening always comes last.
  for (const setting of HARDENING_CONFIG) argv.push("-c", setting);
  for (const protocol of options.remoteProtocols ?? []) {
    if (protocol !== "file" && protocol !== "http" && protocol !== "https")
      throw gitError("usage", "(args)", "unknown remote protocol");
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

  return runLaunched(options, subcommand, argv, env, timeoutMs, maxStdout, okExitCodes);
}

async function runLaunched(
  options: TRunGitOptions,
  subcommand: string,
  argv: string[],
  env: Record<string, string>,
  timeoutMs: number,
  maxStdout: number,
  okExitCodes: readonly number[],
): Promise<TGitResult> {
  let failure: AppError | undefined;
  if (options.signal?.aborted) throw gitError("timeout", subcommand, "was aborted");
  let child: TLaunchedProcess;
  try {
    // detached: git's own children (upload-pack, pack-objects, index-pack) share its process
    // group, so a timeout can kill all of them, not just the parent.
    child = await launchProcess({
      file: "git",
      args: argv,
      env,
      cwd: options.cwd ?? getPrivateHome(),
      detached: true,
      // no input: /dev/null, one stream fewer to connect
      stdin: options.input === undefined ? "ignore" : "pipe",
      stdout: options.stdoutTo ?? "pipe",
      stderr: "pipe",
    });
  } catch (error) {
    throw gitError(
      "spawn",
      subcommand,
      `could not start git: ${sanitizeExcerpt((error as Error).message, STDERR_EXCERPT_BYTES, options.secrets ?? [])}`,
    );
  }
  // Piped by the launch above (stdout too, unless it goes to another process; stdin with input).
  const stdin = child.stdin;
  const stderr = child.stderr!;
  const stdoutChunks: Buffer[] = [];
  let stdoutBytes = 0;
  const stderrChunks: Buffer[] = [];
  let stderrBytes = 0;

  const killGroup = () => child.kill("SIGKILL");
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

  // finished() also settles for a stream that already ended (a quick git with nothing to say).
  const streamsClosed = [child.stdout, stderr].map((stream) =>
    stream ? finished(stream).catch(() => undefined) : Promise.resolve(),
  );
  child.stdout?.on("error", () => undefined);
  stderr.on("error", () => undefined);
  child.stdout?.on("data", (chunk: Buffer) => {
    if (failure) return;
    if (options.onStdout) {
      try {
        options.onStdout(chunk);
      } catch (error) {
        failure =
          error instanceof AppError
            ? error
            : gitError("output_limit", subcommand, `output consumer failed: ${(error as Error).message}`);
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
  stderr.on("data", (chunk: Buffer) => {
    if (stderrBytes >= MAX_STDERR_BYTES) return;
    const room = MAX_STDERR_BYTES - stderrBytes;
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk;
    stderrChunks.push(kept);
    stderrBytes += kept.length;
  });
  // git closing stdin early (it failed, or needed no input) is reported through its exit code.
  stdin?.on("error", () => undefined);
  if (stdin)
    writeInput(stdin, options.input).catch((error: unknown) => {
      failure ??=
        error instanceof AppError
          ? error
          : gitError("exit", subcommand, `writing input failed: ${(error as Error).message}`);
      killGroup();
    });

  const exit = await child.exited;
  await Promise.all(streamsClosed);
  clearTimeout(timer);
  options.signal?.removeEventListener("abort", onAbort);
  stdin?.destroy();
  const stderrText = Buffer.concat(stderrChunks).toString("utf8");
  const stderrExcerpt = sanitizeExcerpt(stderrText.trim(), STDERR_EXCERPT_BYTES, options.secrets ?? []);
  if (failure) throw failure;
  if (exit.isLauncherLost) throw gitError("spawn", subcommand, "the process launcher ended while git ran");
  const exitCode = exit.code ?? -1;
  if (exit.signal || !okExitCodes.includes(exitCode)) {
    throw gitError(
      "exit",
      subcommand,
      `exited with ${exit.signal ?? exitCode}${stderrExcerpt ? `: ${stderrExcerpt}` : ""}`,
      {
        exitCode,
        stderr: stderrExcerpt,
      },
    );
  }
  return { stdout: Buffer.concat(stdoutChunks), stderr: stderrText, exitCode };
}

async function writeInput(
  stdin: NodeJS.WritableStream & { destroyed?: boolean },
  input: TGitInput | undefined,
): Promise<void> {
  if (input === undefined) {
    stdin.end();
    return;
  }
  if (typeof input === "string" || Buffer.isBuffer(input)) {
    stdin.end(input);
    return;
  }
  // Each chunk is written (handed to the pipe) before the next is asked for: a source may then
  // hand out views of one buffer it refills (the candidate import does), and at most one chunk
  // is in memory at a time.
  for await (const chunk of input) {
    if (stdin.destroyed) return;
    await new Promise<void>((resolve) => {
      const done = () => {
        stdin.removeListener("close", done);
        resolve();
      };
      stdin.once("close", done);
      stdin.write(chunk, done);
    });
  }
  stdin.end();
}
