/**
 * CandidateManifest v1: the immutable identity of an imported candidate, computed by the control
 * plane from the git state it observed after import — never from guest claims. It holds
 * identities and digests only, never source: paths, modes, blob ids and sha256 digests.
 */
import { z } from "zod";

const ZSha1 = z.string().regex(/^[0-9a-f]{40}$/, "a full lower-case SHA-1");
const ZSha256 = z.string().regex(/^[0-9a-f]{64}$/, "a lower-case sha256 hex digest");
const ZGitMode = z.enum(["100644", "100755", "120000", "160000"]);
/** Paths as git records them: relative, "/"-separated, already validated at import. */
const ZRepoPath = z.string().min(1).max(4096);

export const ZChangedFileSchema = z
  .object({
    path: ZRepoPath,
    /** A added, M modified (content and/or mode), D deleted, T type changed (file ↔ symlink). */
    status: z.enum(["A", "M", "D", "T"]),
    oldMode: ZGitMode.nullable(),
    newMode: ZGitMode.nullable(),
    oldBlob: ZSha1.nullable(),
    newBlob: ZSha1.nullable(),
  })
  .strict();

export const ZFileDigestSchema = z
  .object({
    path: ZRepoPath,
    mode: z.enum(["100644", "100755", "120000"]),
    sizeBytes: z.number().int().nonnegative(),
    /** sha256 of the file's bytes (of the target, for a symlink). */
    sha256: ZSha256,
  })
  .strict();

export const ZCandidateManifestSchema = z
  .object({
    v: z.literal(1),
    /** "cand_" + the first 32 hex of sha256 over the identity fields (see candidateIdOf). */
    candidateId: z.string().regex(/^cand_[0-9a-f]{32}$/),
    taskId: z.uuid(),
    issueNumber: z.number().int().positive(),
    /** canonical owner/name, lower-case */
    repository: z.string().regex(/^[a-z0-9_][a-z0-9_.-]*\/[a-z0-9_][a-z0-9_.-]*$/),
    baseRef: z.string().min(1).max(255),
    baseSha: ZSha1,
    headSha: ZSha1,
    branch: z.string().regex(/^school\/[0-9a-f-]{36}$/),
    /** In git's path order (diff-tree), one entry per changed path; renames are never inferred. */
    changedFiles: z.array(ZChangedFileSchema).min(1),
    /** sha256 of `git diff --binary --full-index base head` in its canonical form. */
    diffDigest: ZSha256,
    /** sha256 of the archive exactly as received; the artifact store's key. */
    archiveDigest: ZSha256,
    /** Every file of the snapshot (not only the changed ones), in git's path order. */
    fileDigests: z.array(ZFileDigestSchema),
  })
  .strict();

export type TCandidateManifest = z.infer<typeof ZCandidateManifestSchema>;
export type TChangedFile = z.infer<typeof ZChangedFileSchema>;
export type TFileDigest = z.infer<typeof ZFileDigestSchema>;
