/**
 * The operator's read model of one candidate: the manifest (identity, change set, per-file
 * digests) plus the stored artifact's size and the record's time. No source content.
 */
import type { TCandidateManifest } from "../contract/candidate-manifest";
import type { Db } from "../db/client";
import { findCandidateManifest } from "./candidate.repo";

export const CANDIDATE_ID_PATTERN = /^cand_[0-9a-f]{32}$/;

export type TCandidateView = { manifest: TCandidateManifest; artifactBytes: bigint | null; createdAt: Date };

/** null when there is no such candidate (or the id is not one). */
export async function getCandidateView(
  deps: { db: Db },
  input: { candidateId: string },
): Promise<TCandidateView | null> {
  const { db } = deps;
  const { candidateId } = input;
  if (!CANDIDATE_ID_PATTERN.test(candidateId)) return null;
  const manifest = await findCandidateManifest(db, candidateId);
  if (!manifest) return null;
  const [row, artifact] = await Promise.all([
    db.candidate.findUniqueOrThrow({ where: { id: candidateId }, select: { createdAt: true } }),
    db.artifact.findUnique({ where: { digest: manifest.archiveDigest }, select: { sizeBytes: true } }),
  ]);
  return { manifest, artifactBytes: artifact?.sizeBytes ?? null, createdAt: row.createdAt };
}
