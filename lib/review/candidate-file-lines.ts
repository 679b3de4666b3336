/**
 * Reads lines of one file at one commit of the operator's candidate repository, and the -U0 hunks
 * between two commits' versions of it: what line comments are checked and re-anchored against.
 * Paths come from a form: they are checked before they reach git, and git never sees them as
 * options (they follow "--" or a "<sha>:" prefix).
 */
import { candidateRepoPathFor } from "../candidate/candidate-git";
import { AppError } from "../errors";
import { isFullSha } from "../git/git-values";
import { runGit } from "../git/run-git";
import { parseZeroContextHunks, type TZeroContextHunk } from "./line-anchor";

const MAX_FILE_BYTES = 8 * 1024 * 1024;

export function assertRepoPath(path: string): void {
  const isBad =
    path.length === 0 ||
    path.length > 4096 ||
    path.startsWith("/") ||
    /[\u0000-\u001f\u007f]/.test(path) ||
    path.split("/").some((p) => p === "" || p === "." || p === "..");
  if (isBad)
    throw new AppError("VALIDATION_FAILED", "Not a path of this repository.", {
      fieldErrors: { path: ["Not a path of this repository."] },
    });
}

/** The file's lines at `sha`, or null when the commit has no such file. */
export async function readFileLines(
  dataDir: string,
  input: { repository: string; sha: string; path: string },
): Promise<string[] | null> {
  assertRepoPath(input.path);
  if (!isFullSha(input.sha)) throw new AppError("VALIDATION_FAILED", "Not a full commit SHA.");
  const gitDir = candidateRepoPathFor(dataDir, input.repository);
  const result = await runGit({
    gitDir,
    args: ["cat-file", "blob", `${input.sha}:${input.path}`],
    maxStdoutBytes: MAX_FILE_BYTES,
    okExitCodes: [0, 128],
  });
  if (result.exitCode !== 0) return null;
  const text = result.stdout.toString("utf8");
  const lines = text.split("\n");
  if (text.endsWith("\n")) lines.pop();
  return lines;
}

/** Hunks of `git diff -U0 from to -- path` (no renames: a moved file's comments become outdated). */
export async function readLineHunks(
  dataDir: string,
  input: { repository: string; fromSha: string; toSha: string; path: string },
): Promise<TZeroContextHunk[]> {
  assertRepoPath(input.path);
  if (!isFullSha(input.fromSha) || !isFullSha(input.toSha))
    throw new AppError("VALIDATION_FAILED", "Not a full commit SHA.");
  const gitDir = candidateRepoPathFor(dataDir, input.repository);
  const result = await runGit({
    gitDir,
    args: [
      "diff",
      "-U0",
      "--no-renames",
      "--no-color",
      "--no-ext-diff",
      "--no-textconv",
      input.fromSha,
      input.toSha,
      "--",
      input.path,
    ],
    maxStdoutBytes: MAX_FILE_BYTES,
  });
  return parseZeroContextHunks(result.stdout.toString("utf8"));
}
