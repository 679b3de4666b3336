/**
 * Differences between two commits: the raw per-file listing (modes and blob SHAs, no rename
 * guessing) and a digest of git's canonical binary diff, streamed so a large diff never passes
 * through this process.
 */
import { spawn } from "node:child_process";
import { gitError, runGit } from "./run-git";
import { assertSha, splitNul } from "./git-values";

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
export async function digestBinaryDiff(options: {
  gitDir: string;
  from: string;
  to: string;
  timeoutMs?: number;
}): Promise<string> {
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
