/**
 * The latest evidence for a candidate, re-checked: its stored content parsed, its digest
 * recomputed, and assessed against the candidate and the active manifest.
 */
import { canonicalDigest } from "../canonical-json";
import { ZEvidenceContentSchema, type TEvidenceContent } from "../contract/verification-evidence";
import type { Db, DbTx } from "../db/client";
import { getActiveManifest } from "../verify/trusted-manifests";
import { assessEvidence, type TEvidenceAssessment } from "../verify/verdict";

export type TEvidenceView = {
  evidenceId: string | null;
  digest: string | null;
  manifestDigest: string | null;
  content: TEvidenceContent | null;
  assessment: TEvidenceAssessment;
  createdAt: Date | null;
};

/** `activeManifestDigest` lets a caller assessing many candidates read the active manifest once. */
export async function readLatestEvidence(
  db: Db | DbTx,
  candidate: { id: string; taskId: string; repository: string; baseSha: string; headSha: string },
  activeManifestDigest?: string | null,
): Promise<TEvidenceView> {
  const [row, activeDigest] = await Promise.all([
    db.verificationEvidence.findFirst({ where: { candidateId: candidate.id }, orderBy: { createdAt: "desc" } }),
    activeManifestDigest !== undefined ? activeManifestDigest : getActiveManifest(db).then((m) => m?.digest ?? null),
  ]);
  const parsed = row ? ZEvidenceContentSchema.safeParse(row.checks) : undefined;
  const evidence =
    row && parsed?.success
      ? { content: parsed.data, digest: row.digest, recomputedDigest: canonicalDigest(parsed.data) }
      : null;
  const assessment: TEvidenceAssessment =
    row && !parsed?.success
      ? { status: "mismatched", reasons: ["the stored evidence does not parse"] }
      : assessEvidence({ evidence, candidate, activeManifestDigest: activeDigest });
  return {
    evidenceId: row?.id ?? null,
    digest: row?.digest ?? null,
    manifestDigest: row?.manifestDigest ?? null,
    content: evidence?.content ?? null,
    assessment,
    createdAt: row?.createdAt ?? null,
  };
}
