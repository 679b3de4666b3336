/**
 * "Re-prove" as the operator page and the CLI ask for it: rehydrate a candidate with the
 * deployment's own locations (the mirror of the candidate's repository, the filesystem artifact
 * store and a work directory under DATA_DIR), recording who asked in the audit log.
 */
import path from "node:path";
import { z } from "zod";
import { defaultArtifactRoot, createFsArtifactStore } from "../artifacts/fs-artifact-store";
import { actorIdOf, type Actor } from "../contract/actor";
import type { Db } from "../db/client";
import { mirrorPathFor } from "../repos/mirror";
import { DEFAULT_ARCHIVE_LIMITS, type TArchiveLimits } from "./archive-limits";
import { candidateRepoPathFor } from "./candidate-git";
import { getCandidateManifestOrThrow } from "./candidate.repo";
import { CANDIDATE_ID_PATTERN } from "./get-candidate-view";
import { rehydrateCandidate, type TRehydrationResult } from "./rehydrate-candidate";

/** Input of the operator's "Re-prove" action. */
export const ZReproveCandidateInputSchema = z
  .object({ candidateId: z.string().regex(CANDIDATE_ID_PATTERN, "not a candidate id") })
  .strict();

export type TReproveCandidateInput = {
  candidateId: string;
  actor: Actor | null;
  /** Re-validation limits; default DEFAULT_ARCHIVE_LIMITS. Tighter than at import fails closed. */
  limits?: TArchiveLimits;
  /** Put the proven commit back on school/<taskId> in the candidate repository if it is missing. */
  isRestoreWanted?: boolean;
};

export async function reproveCandidate(
  deps: { db: Db; dataDir: string },
  input: TReproveCandidateInput,
): Promise<TRehydrationResult> {
  const { db, dataDir } = deps;
  const manifest = await getCandidateManifestOrThrow(db, input.candidateId);
  return rehydrateCandidate({
    db,
    candidateId: manifest.candidateId,
    mirrorPath: mirrorPathFor(dataDir, manifest.repository),
    artifactStore: createFsArtifactStore({ rootDir: defaultArtifactRoot(dataDir) }),
    limits: input.limits ?? DEFAULT_ARCHIVE_LIMITS,
    workDir: path.join(dataDir, "work", "candidates"),
    restoreToRepoPath: input.isRestoreWanted ? candidateRepoPathFor(dataDir, manifest.repository) : undefined,
    actorId: actorIdOf(input.actor),
  });
}
