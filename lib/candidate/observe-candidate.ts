/**
 * What the candidate is, read from git after import: the changed-file set with statuses and modes
 * (diff-tree, no rename detection) and the digest of the canonical binary diff. This, not the
 * guest's claims, is the candidate's identity.
 */
import { diffTreeRaw, digestBinaryDiff } from "../git/git-diff";
import type { TChangedFile } from "../contract/candidate-manifest";

const NULL_SHA = "0000000000000000000000000000000000000000";

function modeOrNull(mode: string): TChangedFile["oldMode"] {
  return mode === "000000" ? null : (mode as TChangedFile["oldMode"]);
}

export async function observeCandidate(options: {
  gitDir: string;
  baseSha: string;
  headSha: string;
}): Promise<{ changedFiles: TChangedFile[]; diffDigest: string }> {
  // The listing and the binary diff are independent reads of the same two commits: run together.
  const [raw, diffDigest] = await Promise.all([
    diffTreeRaw({
      gitDir: options.gitDir,
      from: options.baseSha,
      to: options.headSha,
      maxOutputBytes: 64 * 1024 * 1024,
    }),
    digestBinaryDiff({ gitDir: options.gitDir, from: options.baseSha, to: options.headSha, timeoutMs: 10 * 60_000 }),
  ]);
  const changedFiles: TChangedFile[] = raw.map((entry) => ({
    path: entry.path,
    status: entry.status,
    oldMode: modeOrNull(entry.oldMode),
    newMode: modeOrNull(entry.newMode),
    oldBlob: entry.oldSha === NULL_SHA ? null : entry.oldSha,
    newBlob: entry.newSha === NULL_SHA ? null : entry.newSha,
  }));
  return { changedFiles, diffDigest };
}
