/**
 * The Artifact row: digest, size and kind of a stored artifact. The row never holds content;
 * the bytes live in the ArtifactStore under the same digest.
 */
import type { Db, DbTx } from "../db/client";
import { AppError } from "../errors";
import type { TArtifactRef } from "./artifact-store";

export const ARTIFACT_KINDS = ["candidate-archive", "probe-evidence", "dependency-bundle", "agent-code"] as const;
export type TArtifactKind = (typeof ARTIFACT_KINDS)[number];

/** Records an artifact; recording the same digest again is a no-op, a different size is corruption. */
export async function recordArtifact(db: Db | DbTx, artifact: TArtifactRef & { kind: TArtifactKind }): Promise<void> {
  await db.artifact.createMany({
    data: [{ digest: artifact.digest, sizeBytes: BigInt(artifact.sizeBytes), kind: artifact.kind }],
    skipDuplicates: true,
  });
  const row = await db.artifact.findUnique({ where: { digest: artifact.digest } });
  if (!row || row.sizeBytes !== BigInt(artifact.sizeBytes) || row.kind !== artifact.kind) {
    throw new AppError("ARTIFACT_CORRUPT", "An artifact row with this digest disagrees on size or kind.", {
      digest: artifact.digest,
    });
  }
}
