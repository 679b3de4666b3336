/**
 * Re-proves a recorded candidate: rebuilds its head from the base (from our own mirror) and the
 * stored artifact, with the one recipe import uses too (candidate-commit.ts), and fails closed
 * unless the rebuilt commit is exactly the recorded head. The record alone cannot do this —
 * without the artifact there is no content — and the artifact is not trusted blindly: its digest
 * is checked on read, it is re-validated, and the head SHA commits to every byte of the tree.
 *
 * With `restoreToRepoPath`, a proven commit is put back on school/<taskId> there (recovery of a
 * lost candidate repository); a branch pointing elsewhere is a conflict, never overwritten.
 */
import fs from "node:fs/promises";
import path from "node:path";
import type { ArtifactStore } from "../artifacts/artifact-store";
import { recordAudit } from "../audit";
import type { Db } from "../db/client";
import { AppError, isAppError } from "../errors";
import { fetchCommit } from "../git/git-plumbing";
import type { TArchiveLimits } from "./archive-limits";
import { writeCandidateCommit } from "./candidate-commit";
import { fileDigestsOf } from "./candidate-manifest";
import { createOrVerifyBranch, ensureBareRepository, pinRoundRef } from "./candidate-git";
import { getCandidateManifestOrThrow } from "./candidate.repo";
import { acceptedOrThrow } from "./import-candidate";
import { observeCandidate } from "./observe-candidate";
import { validateArchive } from "./validate-archive";

export type TRehydrateCandidateOptions = {
  db: Db;
  candidateId: string;
  /** The control plane's own bare mirror of the candidate's repository. */
  mirrorPath: string;
  artifactStore: ArtifactStore;
  limits: TArchiveLimits;
  /** A private directory for staging (a fresh subdirectory is made and removed). */
  workDir: string;
  restoreToRepoPath?: string;
  /** Who asked (recorded in the audit log with the outcome); omit for system calls. */
  actorId?: string | null;
};

export type TRehydrationResult = {
  verdict: "reproduced";
  candidateId: string;
  headSha: string;
  rebuiltHeadSha: string;
  diffDigest: string;
  isRestored: boolean;
};

function mismatch(message: string, details?: Record<string, unknown>): AppError {
  return new AppError("CANDIDATE_MISMATCH", message, details);
}

async function rebuild(options: TRehydrateCandidateOptions): Promise<TRehydrationResult> {
  const manifest = await getCandidateManifestOrThrow(options.db, options.candidateId);
  const task = await options.db.task.findUnique({
    where: { id: manifest.taskId },
    select: {
      issueNumber: true,
      baseRef: true,
      baseSha: true,
      createdAt: true,
      round: true,
      repository: { select: { name: true } },
    },
  });
  if (!task) throw mismatch("The candidate's task record is missing.");
  const { round } = await options.db.candidate.findUniqueOrThrow({
    where: { id: manifest.candidateId },
    select: { round: true },
  });
  if (
    task.baseSha !== manifest.baseSha ||
    task.baseRef !== manifest.baseRef ||
    task.issueNumber !== manifest.issueNumber ||
    task.repository.name !== manifest.repository
  ) {
    throw mismatch("The task's base or identity no longer matches the recorded candidate.");
  }

  await fs.mkdir(options.workDir, { recursive: true });
  const staging = await fs.mkdtemp(path.join(options.workDir, "rehydrate-"));
  try {
    const archivePath = path.join(staging, "archive");
    await options.artifactStore.readToFile({ digest: manifest.archiveDigest, destPath: archivePath });
    const spoolPath = path.join(staging, "content.spool");
    const verdict = acceptedOrThrow(await validateArchive({ archivePath, limits: options.limits, spoolPath }));
    if (verdict.archive.sha256 !== manifest.archiveDigest)
      throw mismatch("The artifact's digest differs from the record.");
    if (JSON.stringify(fileDigestsOf(verdict.entries)) !== JSON.stringify(manifest.fileDigests))
      throw mismatch("The artifact's per-file digests differ from the record.");

    // A scratch repository: the proof must not depend on anything the candidate repository holds.
    const gitDir = path.join(staging, "rebuild.git");
    const rebuiltHeadSha = await writeCandidateCommit({
      gitDir,
      mirrorPath: options.mirrorPath,
      baseSha: manifest.baseSha,
      identity: {
        taskId: manifest.taskId,
        issueNumber: manifest.issueNumber,
        repository: manifest.repository,
        taskCreatedAt: task.createdAt,
        round,
      },
      entries: verdict.entries,
      spoolPath,
    });
    if (rebuiltHeadSha !== manifest.headSha)
      throw mismatch("The rebuilt head differs from the recorded head.", {
        recorded: manifest.headSha,
        rebuilt: rebuiltHeadSha,
      });

    const observed = await observeCandidate({ gitDir, baseSha: manifest.baseSha, headSha: rebuiltHeadSha });
    if (JSON.stringify(observed.changedFiles) !== JSON.stringify(manifest.changedFiles))
      throw mismatch("The rebuilt change set differs from the record.");
    // Same head, different diff digest would mean git's diff output changed: still not a proof.
    if (observed.diffDigest !== manifest.diffDigest)
      throw mismatch("The rebuilt diff digest differs from the record.", {
        recorded: manifest.diffDigest,
        rebuilt: observed.diffDigest,
      });

    let isRestored = false;
    if (options.restoreToRepoPath) {
      await ensureBareRepository(options.restoreToRepoPath);
      await fetchCommit({ gitDir: options.restoreToRepoPath, sourceRepoPath: gitDir, sha: rebuiltHeadSha });
      await pinRoundRef({ gitDir: options.restoreToRepoPath, taskId: manifest.taskId, round, headSha: rebuiltHeadSha });
      // The branch follows the task's latest round; an earlier round is restored under its round ref only.
      if (round === task.round)
        await createOrVerifyBranch({
          gitDir: options.restoreToRepoPath,
          branch: manifest.branch,
          headSha: rebuiltHeadSha,
        });
      isRestored = true;
    }
    return {
      verdict: "reproduced",
      candidateId: manifest.candidateId,
      headSha: manifest.headSha,
      rebuiltHeadSha,
      diffDigest: observed.diffDigest,
      isRestored,
    };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

export async function rehydrateCandidate(options: TRehydrateCandidateOptions): Promise<TRehydrationResult> {
  try {
    const result = await rebuild(options);
    if (options.actorId !== undefined) {
      await recordAudit(options.db, {
        actorId: options.actorId,
        action: "candidate.reprove",
        targetType: "candidate",
        targetId: result.candidateId,
        detail: { outcome: "reproduced", headSha: result.headSha },
      });
    }
    return result;
  } catch (error) {
    if (options.actorId !== undefined && !(isAppError(error) && error.code === "NOT_FOUND")) {
      await recordAudit(options.db, {
        actorId: options.actorId,
        action: "candidate.reprove",
        targetType: "candidate",
        targetId: options.candidateId.slice(0, 64),
        detail: { outcome: isAppError(error) ? error.code : "INTERNAL" },
      }).catch(() => undefined);
    }
    throw error;
  }
}
