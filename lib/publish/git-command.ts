/**
 * A small, private git runner for publication and the local forge, until the shared safe runner
 * (lib/git/run-git.ts) lands; then this file goes and its callers switch.
 *
 * argv only (no shell), no system or global config, a private HOME, no hooks, no credential
 * helpers, no prompts, and a minimal environment: nothing of the control plane's environment
 * (tokens, database URLs) leaks into git or into whatever git might spawn. Secrets reach git only
 * through `secretEnv` (GIT_CONFIG_COUNT/KEY/VALUE), never through argv, which other users of the
 * machine can read in /proc and which error messages tend to quote.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { AppError } from "../errors";
import { sanitizeExcerpt } from "../redact";

const MAX_OUTPUT_BYTES = 8 << 20;
const MAX_ERROR_EXCERPT_BYTES = 1024;

let privateHome: string | undefined;

/** One empty, private HOME per process: git reads no user config and writes nothing of ours. */
function getPrivateHome(): string {
  if (!privateHome || !fs.existsSync(privateHome)) {
    privateHome = fs.mkdtempSync(path.join(os.tmpdir(), "schoolcore-git-home-"));
    fs.chmodSync(privateHome, 0o700);
  }
  return privateHome;
}

/** Config every invocation gets: hooks off, no credential helper, only the transports we use. */
const SAFE_CONFIG: readonly (readonly [string, string])[] = [
  ["core.hooksPath", "/dev/null"],
  ["credential.helper", ""],
  ["protocol.allow", "never"],
  ["protocol.file.allow", "always"],
  ["protocol.http.allow", "always"],
  ["protocol.https.allow", "always"],
  // A redirect must not carry our Authorization header to another host.
  ["http.followRedirects", "false"],
  ["core.askPass", ""],
];

export type TGitResult = { code: number; stdout: string; stderr: string };

export type TRunGitOptions = {
  args: readonly string[];
  cwd?: string;
  /** Config entries that must not appear in argv (an Authorization header). */
  secretConfig?: readonly (readonly [string, string])[];
  /** Literal secrets to scrub from any text this runner returns or throws. */
  secrets?: readonly string[];
  timeoutMs?: number;
  stdin?: string;
  signal?: AbortSignal;
};

/** The environment git runs with: minimal, fixed, with secret config passed as GIT_CONFIG_* pairs. */
export function buildGitEnv(secretConfig: readonly (readonly [string, string])[] = []): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: getPrivateHome(),
    LANG: "C",
    LC_ALL: "C",
    GIT_CONFIG_NOSYSTEM: "1",
    GIT_CONFIG_GLOBAL: "/dev/null",
    GIT_TERMINAL_PROMPT: "0",
    GIT_ASKPASS: "/bin/false",
    SSH_ASKPASS: "/bin/false",
  };
  const entries = [...SAFE_CONFIG, ...secretConfig];
  env.GIT_CONFIG_COUNT = String(entries.length);
  entries.forEach(([key, value], index) => {
    env[`GIT_CONFIG_KEY_${index}`] = key;
    env[`GIT_CONFIG_VALUE_${index}`] = value;
  });
  return env;
}

/** Runs git and returns its exit code and output; throws only when git cannot run or times out. */
export function runGit(options: TRunGitOptions): Promise<TGitResult> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const secrets = options.secrets ?? [];
  return new Promise((resolve, reject) => {
    const child = spawn("git", [...options.args], {
      cwd: options.cwd,
      env: buildGitEnv(options.secretConfig) as NodeJS.ProcessEnv,
      stdio: ["pipe", "pipe", "pipe"],
    });
    const stdout: Buffer[] = [];
    const stderr: Buffer[] = [];
    let size = 0;
    let failure: AppError | undefined;
    const kill = (reason: string) => {
      failure ??= new AppError("PUBLISH_FAILED", `git ${options.args[0] ?? ""} ${reason}`);
      child.kill("SIGKILL");
    };
    const timer = setTimeout(() => kill(`timed out after ${timeoutMs} ms`), timeoutMs);
    const onAbort = () => kill("was aborted");
    options.signal?.addEventListener("abort", onAbort, { once: true });
    const collect = (into: Buffer[]) => (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_OUTPUT_BYTES) kill("produced too much output");
      else into.push(chunk);
    };
    child.stdout.on("data", collect(stdout));
    child.stderr.on("data", collect(stderr));
    child.on("error", (error) => {
      failure ??= new AppError("PUBLISH_FAILED", `git could not start: ${sanitizeExcerpt(error.message, 256, secrets)}`);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      options.signal?.removeEventListener("abort", onAbort);
      if (failure) return reject(failure);
      resolve({ code: code ?? -1, stdout: Buffer.concat(stdout).toString("utf8"), stderr: Buffer.concat(stderr).toString("utf8") });
    });
    child.stdin.on("error", () => undefined);
    child.stdin.end(options.stdin ?? "");
  });
}

/** Runs git and throws a bounded, redacted PUBLISH_FAILED unless it exits 0. */
export async function runGitOrThrow(options: TRunGitOptions & { what: string }): Promise<string> {
  const result = await runGit(options);
  if (result.code !== 0) {
    throw new AppError("PUBLISH_FAILED", `${options.what} failed (git exit ${result.code}): ${gitErrorExcerpt(result.stderr, options.secrets)}`);
  }
  return result.stdout;
}

export function gitErrorExcerpt(stderr: string, secrets: readonly string[] = []): string {
  return sanitizeExcerpt(stderr.trim().split("\n").slice(-6).join(" | "), MAX_ERROR_EXCERPT_BYTES, secrets);
}

export const FULL_SHA = /^[0-9a-f]{40}$/;
