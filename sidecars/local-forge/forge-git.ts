/**
 * Read-only git queries the forge answers its API and pages from.
 */
import { isFullSha } from "../../lib/git/git-values";
import { runGit } from "../../lib/git/run-git";

const MAX_DIFF_BYTES = 512 * 1024;

/** Branch names the forge accepts: what our publication uses and GitHub allows, nothing that could be an option. */
export function isSafeBranchName(ref: string): boolean {
  return (
    /^[A-Za-z0-9_][A-Za-z0-9._\/-]{0,199}$/.test(ref) &&
    !ref.includes("..") &&
    !ref.endsWith("/") &&
    !ref.endsWith(".lock") &&
    !ref.includes("//")
  );
}

/** The commit a branch points at, or null when it does not exist. */
export async function readBranchSha(gitDir: string, branch: string): Promise<string | null> {
  if (!isSafeBranchName(branch)) return null;
  const result = await runGit({
    gitDir,
    args: ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`],
    timeoutMs: 10_000,
    okExitCodes: [0, 1, 128],
  });
  const sha = result.stdout.toString("utf8").trim();
  return result.exitCode === 0 && isFullSha(sha) ? sha : null;
}

/** The diff base..head, bounded; a cut diff says so. */
export async function readDiff(gitDir: string, baseSha: string, headSha: string): Promise<string> {
  if (!isFullSha(baseSha) || !isFullSha(headSha)) return "";
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    await runGit({
      gitDir,
      args: ["diff", "--no-color", "--no-ext-diff", "--no-textconv", baseSha, headSha, "--"],
      timeoutMs: 20_000,
      onStdout: (chunk) => {
        if (size < MAX_DIFF_BYTES) chunks.push(chunk);
        size += chunk.length;
      },
    });
  } catch {
    return "(the diff is not available)";
  }
  const bytes = Buffer.concat(chunks);
  if (size <= MAX_DIFF_BYTES) return bytes.toString("utf8");
  return bytes.subarray(0, MAX_DIFF_BYTES).toString("utf8") + `\n… [diff cut at ${MAX_DIFF_BYTES} bytes]`;
}
