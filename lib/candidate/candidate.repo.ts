/**
 * Candidate rows. A row is written once (a database trigger refuses UPDATE and DELETE) and holds
 * the manifest: identities and digests, never source. Reading a row back goes through the
 * manifest schema, so a row that no longer parses is an integrity failure, not data.
 */
import { recordArtifact } from "../artifacts/artifact.repo";
import type { TArtifactRef } from "../artifacts/artifact-store";
import { ZCandidateManifestSchema, type TCandidateManifest } from "../contract/candidate-manifest";
import type { Db, DbTx } from "../db/client";
import { AppError } from "../errors";
import { isSameManifest } from "./candidate-manifest";

type TCandidateRow = NonNullable<Awaited<ReturnType<Db["candidate"]["findUnique"]>>>;

function manifestOfRow(row: TCandidateRow): TCandidateManifest {
  const parsed = ZCandidateManifestSchema.safeParse({
    v: 1,
    candidateId: row.id,
    taskId: row.taskId,
    issueNumber: row.issueNumber,
    repository: row.repository,
    baseRef: row.baseRef,
    baseSha: row.baseSha,
    headSha: row.headSha,
    branch: row.branch,
    changedFiles: row.changedFiles,
    diffDigest: row.diffDigest,
    archiveDigest: row.archiveDigest,
    fileDigests: row.fileDigests,
  });
  if (!parsed.success)
    throw new AppError("CANDIDATE_MISMATCH", `Stored candidate ${row.id.slice(0, 40)} does not parse as a manifest.`);
  return parsed.data;
}

export async function findCandidateManifest(db: Db | DbTx, candidateId: string): Promise<TCandidateManifest | null> {
  const row = await db.candidate.findUnique({ where: { id: candidateId } });
  return row ? manifestOfRow(row) : null;
}

export async function getCandidateManifestOrThrow(db: Db | DbTx, candidateId: string): Promise<TCandidateManifest> {
  const manifest = await findCandidateManifest(db, candidateId);
  if (!manifest) throw new AppError("NOT_FOUND", "No such candidate.");
  return manifest;
}

/** The candidate of a task's round (round 1 when not given). */
export async function findCandidateManifestByTask(
  db: Db | DbTx,
  taskId: string,
  round = 1,
): Promise<TCandidateManifest | null> {
  const row = await db.candidate.findUnique({ where: { taskId_round: { taskId, round } } });
  return row ? manifestOfRow(row) : null;
}

/**
 * Records the artifact and the candidate in one transaction. A task has at most one candidate per round:
 * writing the same manifest again (a retried import) returns it; a different one is a conflict.
 */
export async function insertCandidate(
  db: Db,
  manifest: TCandidateManifest,
  artifact: TArtifactRef,
  lineage: { round: number; parentCandidateId: string | null } = { round: 1, parentCandidateId: null },
): Promise<TCandidateManifest> {
  try {
    await db.$transaction(async (tx) => {
      await recordArtifact(tx, { ...artifact, kind: "candidate-archive" });
      await tx.candidate.create({
        data: {
          id: manifest.candidateId,
          taskId: manifest.taskId,
          issueNumber: manifest.issueNumber,
          repository: manifest.repository,
          baseRef: manifest.baseRef,
          baseSha: manifest.baseSha,
          headSha: manifest.headSha,
          branch: manifest.branch,
          changedFiles: manifest.changedFiles,
          diffDigest: manifest.diffDigest,
          archiveDigest: manifest.archiveDigest,
          fileDigests: manifest.fileDigests,
          round: lineage.round,
          parentCandidateId: lineage.parentCandidateId,
        },
      });
    });
    return manifest;
  } catch (error) {
    if ((error as { code?: string }).code !== "P2002") throw error;
    const existing = await findCandidateManifestByTask(db, manifest.taskId, lineage.round);
    if (existing && isSameManifest(existing, manifest)) return existing;
    throw new AppError("STATE_CONFLICT", "This task already has a different candidate; a candidate is immutable.", {
      existing: existing?.candidateId ?? null,
    });
  }
}
