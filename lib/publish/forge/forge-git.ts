/**
 * Read-only git queries the forge answers its API and pages from.
 */
import { FULL_SHA, runGit } from "../git-command";

const MAX_DIFF_BYTES = 512 * 1024;

/** Branch names the forge accepts: what our publication uses and GitHub allows, nothing that could be an option. */
export function isSafeBranchName(ref: string): boolean {
  return /^[A-Za-z0-9_][A-Za-z0-9._\/-]{0,199}$/.test(ref) && !ref.includes("..") && !ref.endsWith("/") && !ref.endsWith(".lock") && !ref.includes("//");
}

/** The commit a branch points at, or null when it does not exist. */
export async function readBranchSha(gitDir: string, branch: string): Promise<string | null> {
  if (!isSafeBranchName(branch)) return null;
  const result = await runGit({ args: ["--git-dir", gitDir, "rev-parse", "--verify", "--quiet", `refs/heads/${branch}^{commit}`], timeoutMs: 10_000 });
  const sha = result.stdout.trim();
  return result.code === 0 && FULL_SHA.test(sha) ? sha : null;
}

/** The diff base..head, bounded; a cut diff says so. */
export async function readDiff(gitDir: string, baseSha: string, headSha: string): Promise<string> {
  if (!FULL_SHA.test(baseSha) || !FULL_SHA.test(headSha)) return "";
  const result = await runGit({ args: ["--git-dir", gitDir, "diff", "--no-color", "--no-ext-diff", "--no-textconv", baseSha, headSha], timeoutMs: 20_000 });
  if (result.code !== 0) return "(the diff is not available)";
  const bytes = Buffer.from(result.stdout, "utf8");
  if (bytes.length <= MAX_DIFF_BYTES) return result.stdout;
  return bytes.subarray(0, MAX_DIFF_BYTES).toString("utf8") + `\n… [diff cut at ${MAX_DIFF_BYTES} bytes]`;
}
