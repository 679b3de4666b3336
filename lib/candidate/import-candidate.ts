/**
 * Imports a guest's candidate archive — the complete working tree after the student's changes,
 * a snapshot (absent files are deletions) — into the operator-owned candidate repository, and
 * records the immutable candidate manifest computed from what git then shows.
 *
 * Order matters, and is the safety argument:
 * 1. validate the archive in one streaming pass; file bytes go to a spool in a private staging
 *    directory (by offset, never by path). Nothing else is written before the verdict.
 * 2. only then touch the candidate repository: bring the base from our own mirror, build the
 *    commit with fast-import under fixed metadata, on a private temporary ref (the one recipe
 *    rehydration also uses: candidate-commit.ts);
 * 3. observe the change set and diff digest from git; compare with what the guest declared;
 * 4. store the archive (digest-checked against what was validated), create school/<taskId>,
 *    then write the Artifact and Candidate rows in one transaction.
 * A failure at any step leaves no branch and no row; a retry with the same inputs gives the same
 * commit and the same manifest, and is accepted as the same candidate.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { z } from "zod";
import type { ArtifactStore } from "../artifacts/artifact-store";
import type { TCandidateManifest } from "../contract/candidate-manifest";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import type { TArchiveLimits } from "./archive-limits";
import { displayPath, type TArchiveRefusal } from "./archive-refusals";
import { writeCandidateCommit } from "./candidate-commit";
import { candidateBranchName } from "./candidate-commit-metadata";
import { buildCandidateManifest, fileDigestsOf } from "./candidate-manifest";
import { createOrVerifyBranch, pinRoundRef } from "./candidate-git";
import { findCandidateManifestByTask, insertCandidate } from "./candidate.repo";
import { readSetting } from "../settings/operator-settings";
import { observeCandidate } from "./observe-candidate";
import { classifyProtectedPaths } from "./protected-paths";
import { validateArchive, type TArchiveVerdict } from "./validate-archive";

export const ZImportTaskSchema = z
  .object({
    id: z.uuid(),
    issueNumber: z.number().int().positive(),
    repository: z.string().regex(/^[a-z0-9_][a-z0-9_.-]*\/[a-z0-9_][a-z0-9_.-]*$/),
    baseRef: z.string().min(1).max(255),
    baseSha: z.string().regex(/^[0-9a-f]{40}$/),
  })
  .strict();

export type TImportCandidateOptions = {
  db: Db;
  /** The task as the lifecycle knows it; must agree with the Task row or the import fails. */
  task: z.infer<typeof ZImportTaskSchema>;
  /** The archive as collected from the guest (tar, or gzip-compressed tar). */
  archivePath: string;
  /** GuestResult.candidate.changedPaths: must equal the changed set git observes. */
  declaredChangedPaths: readonly string[];
  /** GuestResult.candidate.archiveSha256, when the guest declared one: must equal what we hashed. */
  declaredArchiveDigest?: string;
  /** The control plane's own bare mirror of the target repository. */
  mirrorPath: string;
  /** The operator-owned bare candidate repository (created on first use). */
  candidateRepoPath: string;
  artifactStore: ArtifactStore;
  limits: TArchiveLimits;
  /** A private directory for staging (a fresh subdirectory is made and removed). */
  workDir: string;
  /** The review round this candidate answers (issue 14); 1 when absent. */
  round?: number;
  /**
   * A revision round's starting point: the previous round's candidate. The guest's tree grew from
   * its head, so the declared paths are compared with previous..head; the identity stays base..head.
   */
  previous?: { candidateId: string; headSha: string };
};

const MAX_SAMPLES = 5;

export function archiveRefusedError(reasons: readonly TArchiveRefusal[]): AppError {
  const first = reasons[0];
  const summary = first ? `${first.code}${first.path ? ` (${first.path})` : ""}` : "no reason";
  return new AppError(
    "ARCHIVE_REFUSED",
    `The candidate archive was refused: ${summary}${reasons.length > 1 ? ` and ${reasons.length - 1} more` : ""}.`,
    { reasons: reasons.map((r) => ({ ...r })) },
  );
}

/** Throws ARCHIVE_REFUSED for a refused verdict; returns the accepted one. */
export function acceptedOrThrow(verdict: TArchiveVerdict): Extract<TArchiveVerdict, { kind: "accepted" }> {
  if (verdict.kind === "refused") throw archiveRefusedError(verdict.reasons);
  return verdict;
}

async function loadTaskFacts(db: Db, task: TImportCandidateOptions["task"]): Promise<{ createdAt: Date }> {
  const row = await db.task.findUnique({
    where: { id: task.id },
    select: {
      issueNumber: true,
      baseRef: true,
      baseSha: true,
      createdAt: true,
      repository: { select: { name: true } },
    },
  });
  if (!row) throw new AppError("NOT_FOUND", "No such task.");
  // The lifecycle's view of the task and the record must agree; a stale or forged view would
  // bind the candidate to an identity the task does not have.
  if (
    row.issueNumber !== task.issueNumber ||
    row.baseRef !== task.baseRef ||
    row.baseSha !== task.baseSha ||
    row.repository.name !== task.repository
  ) {
    throw new AppError("CANDIDATE_MISMATCH", "The task identity given to import differs from the task record.");
  }
  return { createdAt: row.createdAt };
}

function compareDeclared(declared: readonly string[], observed: readonly string[]): void {
  const declaredSet = new Set(declared);
  const observedSet = new Set(observed);
  const duplicates = declared.length - declaredSet.size;
  const missing = observed.filter((p) => !declaredSet.has(p));
  const unexpected = [...declaredSet].filter((p) => !observedSet.has(p));
  if (duplicates === 0 && missing.length === 0 && unexpected.length === 0) return;
  throw new AppError(
    "CANDIDATE_MISMATCH",
    `The declared changed paths differ from the observed change set (${missing.length} changed but not declared, ${unexpected.length} declared but not changed, ${duplicates} duplicates).`,
    {
      missingCount: missing.length,
      unexpectedCount: unexpected.length,
      duplicateCount: duplicates,
      missing: missing.slice(0, MAX_SAMPLES).map(displayPath),
      unexpected: unexpected.slice(0, MAX_SAMPLES).map(displayPath),
    },
  );
}

/**
 * The operator's protected publication paths (CI configuration, submodules, code owners …): a
 * candidate touching one the operator has not allowed for this repository is refused here, so it
 * never reaches review or the target repository. Checked before the branch or any row is written.
 */
async function refuseProtectedPaths(db: Db, repository: string, changedPaths: readonly string[]): Promise<void> {
  const { refused } = classifyProtectedPaths(
    await readSetting({ db }, { key: "publish.protectedPaths" }),
    repository,
    changedPaths,
  );
  if (refused.length === 0) return;
  const shown = refused.slice(0, 20).map(displayPath);
  throw new AppError(
    "CANDIDATE_PROTECTED_PATH",
    `The candidate changes protected publication paths the operator has not allowed for ${repository}: ${shown.join(", ")}${refused.length > shown.length ? ` and ${refused.length - shown.length} more` : ""}.`,
    { paths: shown, count: refused.length },
  );
}

export async function importCandidate(options: TImportCandidateOptions): Promise<TCandidateManifest> {
  const task = parseOrThrow(ZImportTaskSchema, options.task, { code: "VALIDATION_FAILED", label: "import task" });
  if (options.declaredArchiveDigest !== undefined && !/^[0-9a-f]{64}$/.test(options.declaredArchiveDigest))
    throw new AppError("CONTRACT_VIOLATION", "The declared archive digest is not a sha256 hex digest.");
  const { createdAt } = await loadTaskFacts(options.db, task);
  const branch = candidateBranchName(task.id);
  const round = options.round ?? 1;
  if (round > 1 !== (options.previous !== undefined))
    throw new AppError(
      "VALIDATION_FAILED",
      "A revision round imports from its previous round's candidate, and only a revision round does.",
    );

  await fs.mkdir(options.workDir, { recursive: true });
  const staging = await fs.mkdtemp(path.join(options.workDir, "import-"));
  try {
    const spoolPath = path.join(staging, "content.spool");
    const verdict = acceptedOrThrow(
      await validateArchive({ archivePath: options.archivePath, limits: options.limits, spoolPath }),
    );
    if (options.declaredArchiveDigest !== undefined && options.declaredArchiveDigest !== verdict.archive.sha256) {
      throw new AppError("CANDIDATE_MISMATCH", "The archive's digest differs from the digest the guest declared.", {
        declared: options.declaredArchiveDigest,
        observed: verdict.archive.sha256,
      });
    }

    // Validation passed: from here on the candidate repository may be written.
    const gitDir = options.candidateRepoPath;
    const headSha = await writeCandidateCommit({
      gitDir,
      mirrorPath: options.mirrorPath,
      baseSha: task.baseSha,
      identity: {
        taskId: task.id,
        issueNumber: task.issueNumber,
        repository: task.repository,
        taskCreatedAt: createdAt,
        round,
      },
      entries: verdict.entries,
      spoolPath,
    });

    const observed = await observeCandidate({ gitDir, baseSha: task.baseSha, headSha });
    if (observed.changedFiles.length === 0)
      throw new AppError("CANDIDATE_EMPTY", "The candidate snapshot is identical to the base.");
    // A revision round's guest saw the previous head, not the base: its declared paths are what
    // changed since then (possibly nothing — a round with no change is recorded and shown as such).
    const sincePrevious = options.previous
      ? await observeCandidate({ gitDir, baseSha: options.previous.headSha, headSha })
      : observed;
    compareDeclared(
      options.declaredChangedPaths,
      sincePrevious.changedFiles.map((f) => f.path),
    );
    await refuseProtectedPaths(
      options.db,
      task.repository,
      observed.changedFiles.map((f) => f.path),
    );

    const manifest = buildCandidateManifest({
      taskId: task.id,
      issueNumber: task.issueNumber,
      repository: task.repository,
      baseRef: task.baseRef,
      baseSha: task.baseSha,
      headSha,
      branch,
      changedFiles: observed.changedFiles,
      diffDigest: observed.diffDigest,
      archiveDigest: verdict.archive.sha256,
      fileDigests: fileDigestsOf(verdict.entries),
    });

    // One candidate per task and round, immutable: a different head for a round that has one is refused
    // before the branch is touched, so the branch never points at an unrecorded commit.
    const existing = await findCandidateManifestByTask(options.db, task.id, round);
    if (existing && existing.headSha !== headSha)
      throw new AppError("STATE_CONFLICT", "This task already has a different candidate; a candidate is immutable.", {
        existing: existing.candidateId,
      });

    // The stored bytes must be the validated bytes: the store re-hashes and refuses a difference.
    const artifact = await options.artifactStore.putFile({
      filePath: options.archivePath,
      expectedDigest: verdict.archive.sha256,
    });
    await pinRoundRef({ gitDir, taskId: task.id, round, headSha });
    await createOrVerifyBranch({ gitDir, branch, headSha, previousHeadSha: options.previous?.headSha });
    return await insertCandidate(options.db, manifest, artifact, {
      round,
      parentCandidateId: options.previous?.candidateId ?? null,
    });
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}
