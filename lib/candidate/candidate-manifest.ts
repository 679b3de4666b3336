/**
 * Assembling and identifying a candidate manifest, pure. The candidate id is a digest of the
 * identity fields (architecture: task, issue, repository, base ref and SHA, head SHA, branch,
 * changed-file set, diff digest), so the same observed state always has the same id.
 */
import { createHash } from "node:crypto";
import { parseOrThrow } from "../parse-or-throw";
import {
  ZCandidateManifestSchema,
  type TCandidateManifest,
  type TChangedFile,
  type TFileDigest,
} from "../contract/candidate-manifest";
import type { TValidatedEntry } from "./tar-validator";

export type TCandidateIdentity = Pick<
  TCandidateManifest,
  "taskId" | "issueNumber" | "repository" | "baseRef" | "baseSha" | "headSha" | "branch" | "changedFiles" | "diffDigest"
>;

/** Byte order of UTF-8 paths, which is git's order for a flattened tree. */
export function compareGitPaths(a: string, b: string): number {
  return Buffer.compare(Buffer.from(a, "utf8"), Buffer.from(b, "utf8"));
}

export function candidateIdOf(identity: TCandidateIdentity): string {
  // Fixed key order: JSON.stringify keeps insertion order, so this literal is the canonical form.
  const canonical = JSON.stringify({
    v: 1,
    taskId: identity.taskId,
    issueNumber: identity.issueNumber,
    repository: identity.repository,
    baseRef: identity.baseRef,
    baseSha: identity.baseSha,
    headSha: identity.headSha,
    branch: identity.branch,
    changedFiles: identity.changedFiles.map((f) => [f.path, f.status, f.oldMode, f.newMode, f.oldBlob, f.newBlob]),
    diffDigest: identity.diffDigest,
  });
  return `cand_${createHash("sha256").update(canonical).digest("hex").slice(0, 32)}`;
}

export function fileDigestsOf(entries: readonly TValidatedEntry[]): TFileDigest[] {
  return entries
    .map((entry): TFileDigest => ({
      path: entry.path,
      mode: entry.kind === "symlink" ? "120000" : entry.mode,
      sizeBytes: entry.size,
      sha256: entry.sha256,
    }))
    .sort((a, b) => compareGitPaths(a.path, b.path));
}

export function buildCandidateManifest(
  input: Omit<TCandidateIdentity, "changedFiles"> & {
    changedFiles: TChangedFile[];
    archiveDigest: string;
    fileDigests: TFileDigest[];
  },
): TCandidateManifest {
  const identity: TCandidateIdentity = {
    taskId: input.taskId,
    issueNumber: input.issueNumber,
    repository: input.repository,
    baseRef: input.baseRef,
    baseSha: input.baseSha,
    headSha: input.headSha,
    branch: input.branch,
    changedFiles: input.changedFiles,
    diffDigest: input.diffDigest,
  };
  const manifest = {
    v: 1,
    candidateId: candidateIdOf(identity),
    ...identity,
    archiveDigest: input.archiveDigest,
    fileDigests: input.fileDigests,
  };
  return parseOrThrow(ZCandidateManifestSchema, manifest, {
    code: "CANDIDATE_MISMATCH",
    label: "observed candidate manifest",
  });
}

/** Whether two manifests are the same candidate, field for field. */
export function isSameManifest(a: TCandidateManifest, b: TCandidateManifest): boolean {
  return JSON.stringify(ZCandidateManifestSchema.parse(a)) === JSON.stringify(ZCandidateManifestSchema.parse(b));
}
