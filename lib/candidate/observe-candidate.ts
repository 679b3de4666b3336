/**
 * What the candidate is, read from git after import: the changed-file set with statuses and modes
 * (diff-tree, no rename detection) and the digest of the canonical binary diff. This, not the
 * guest's claims, is the candidate's identity.
 */
import { createHash } from "node:crypto";
import { diffTreeRaw, streamBinaryDiff } from "../git/git-plumbing";
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
  const hash = createHash("sha256");
  // The listing and the binary diff are independent reads of the same two commits: run together.
  const [raw] = await Promise.all([
    diffTreeRaw({ gitDir: options.gitDir, from: options.baseSha, to: options.headSha, maxOutputBytes: 64 * 1024 * 1024 }),
    streamBinaryDiff({
      gitDir: options.gitDir,
      from: options.baseSha,
      to: options.headSha,
      onChunk: (chunk) => hash.update(chunk),
      timeoutMs: 10 * 60_000,
    }),
  ]);
  const changedFiles: TChangedFile[] = raw.map((entry) => ({
    path: entry.path,
    status: entry.status,
    oldMode: modeOrNull(entry.oldMode),
    newMode: modeOrNull(entry.newMode),
    oldBlob: entry.oldSha === NULL_SHA ? null : entry.oldSha,
    newBlob: entry.newSha === NULL_SHA ? null : entry.newSha,
  }));
  return { changedFiles, diffDigest: hash.digest("hex") };
}
