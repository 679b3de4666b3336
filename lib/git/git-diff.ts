/**
 * Differences between two commits: the raw per-file listing (modes and blob SHAs, no rename
 * guessing) and a digest of git's canonical binary diff, streamed so a large diff never passes
 * through this process.
 */
import { finished } from "node:stream/promises";
import { launchProcess, type TLaunchedProcess } from "../system/process-launcher";
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
  let hasher: TLaunchedProcess;
  try {
    hasher = await launchProcess({
      file: "sha256sum",
      args: ["-b", "-"],
      env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      cwd: "/",
      stdin: "held",
    });
  } catch (error) {
    throw gitError("spawn", "diff", `could not start sha256sum: ${(error as Error).message}`);
  }
  let output = "";
  hasher.stdout!.setEncoding("utf8").on("data", (text: string) => (output = (output + text).slice(0, 256)));
  hasher.stderr!.resume();
  const hasherOutputClosed = finished(hasher.stdout!).catch(() => undefined);
  try {
    // git takes the held stdin as its stdout: the launcher drops its copy, so sha256sum sees the end when git exits.
    await runGit({
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
      stdoutTo: hasher,
      timeoutMs: options.timeoutMs,
    });
  } catch (error) {
    hasher.release();
    hasher.kill("SIGKILL");
    throw error;
  }
  const { code } = await hasher.exited;
  await hasherOutputClosed;
  const digest = /^([0-9a-f]{64}) /.exec(output)?.[1];
  if (code !== 0 || !digest) throw gitError("exit", "diff", `sha256sum of the diff failed (exit ${code})`);
  return digest;
}
