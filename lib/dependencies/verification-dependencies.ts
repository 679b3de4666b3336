/**
 * The dependencies a candidate's trusted checks run with (issue 18): the bundle built from the BASE
 * commit's lockfile — a candidate cannot choose what gets installed for its own checks. When the
 * candidate changed the lockfile (or removed it), the evidence says so in plain words. Building a
 * bundle from the candidate's lockfile (rebuild-from-candidate.ts) and re-running the checks with
 * it (lib/verify/reverify-task.ts) are two separate, audited operator decisions; the evidence then
 * says the candidate's own dependencies were used.
 */
import { candidateRepoPathFor } from "../candidate/candidate-git";
import type { Db, DbTx } from "../db/client";
import {
  CANDIDATE_DEPENDENCIES_NOTE,
  DEPENDENCIES_CHANGED_NOTE,
  type TEvidenceDependencies,
} from "../contract/verification-evidence";
import { AppError } from "../errors";
import { readRecipeInputs } from "./read-recipe-inputs";
import { resolveRecipe } from "./recipes";
import { ensureDependencyBundle } from "./ensure-dependency-bundle";
import { loadDeliverableBundle, type TDeliverableBundle } from "./deliver-dependency-bundle";
import { parseSetupRecipe, type TDependencyDeps } from "./run-dependency-setup";
import type { TSetupRecipe } from "./recipes";

export async function prepareVerificationDependencies(
  deps: TDependencyDeps,
  candidate: { id: string; repository: string; baseSha: string; headSha: string },
  options: { chosenBundleId?: string | null } = {},
): Promise<{ deliverable: TDeliverableBundle; evidence: TEvidenceDependencies } | null> {
  const repo = await deps.db.targetRepository.findUnique({ where: { name: candidate.repository } });
  if (!repo) throw new AppError("NOT_FOUND", `Repository ${candidate.repository.slice(0, 200)} is not a target.`);
  const recipe = parseSetupRecipe(repo.setupRecipe);
  if (!recipe) return null;
  const candidateLockfileDigest = await readCandidateLockfileDigest(deps, candidate, recipe);
  // An operator's re-verification with the candidate's own dependencies: only a bundle built from
  // THIS candidate's lockfile, for this repository, counts; anything else (a later round's
  // candidate) gets the base bundle, and the evidence says which was used.
  const chosen = options.chosenBundleId
    ? await deps.db.dependencyBundle.findFirst({
        where: { id: options.chosenBundleId, repositoryId: repo.id, source: "candidate", candidateId: candidate.id },
      })
    : null;
  if (chosen) {
    return {
      deliverable: await loadDeliverableBundle(deps, chosen),
      evidence: {
        bundleId: chosen.id,
        artifactDigest: chosen.artifactDigest,
        lockfileDigest: chosen.lockfileDigest,
        candidateLockfileDigest,
        isCandidateLockfileChanged: true,
        note: CANDIDATE_DEPENDENCIES_NOTE,
        source: "candidate",
      },
    };
  }
  const bundle = await ensureDependencyBundle(deps, {
    repositoryId: repo.id,
    sha: candidate.baseSha,
    reason: "verification of a candidate on this base",
    machineSlot: "task",
  });
  if (!bundle) return null;
  const isCandidateLockfileChanged = candidateLockfileDigest !== bundle.lockfileDigest;
  return {
    deliverable: await loadDeliverableBundle(deps, bundle),
    evidence: {
      bundleId: bundle.id,
      artifactDigest: bundle.artifactDigest,
      lockfileDigest: bundle.lockfileDigest,
      candidateLockfileDigest,
      isCandidateLockfileChanged,
      note: isCandidateLockfileChanged ? DEPENDENCIES_CHANGED_NOTE : null,
      source: "base",
    },
  };
}

/** The candidate's own lockfile digest (same recipe inputs, from its head commit); null when it deleted or broke one. */
async function readCandidateLockfileDigest(
  deps: TDependencyDeps,
  candidate: { repository: string; headSha: string },
  recipe: TSetupRecipe,
): Promise<string | null> {
  try {
    const inputs = await readRecipeInputs({
      gitDir: candidateRepoPathFor(deps.env.dataDir, candidate.repository),
      sha: candidate.headSha,
      inputFiles: resolveRecipe(recipe).inputFiles,
    });
    return inputs.lockfileDigest;
  } catch (error) {
    // a candidate that deleted or replaced a lockfile changed its dependencies too
    if (!(error instanceof AppError) || error.code !== "DEPENDENCY_SETUP_FAILED") throw error;
    return null;
  }
}

/** The newest bundle an operator built from this candidate's own lockfile, if any (what a re-verification may use). */
export async function findCandidateOwnBundle(
  db: Db | DbTx,
  candidateId: string,
): Promise<{ id: string; artifactDigest: string; createdAt: Date } | null> {
  return db.dependencyBundle.findFirst({
    where: { source: "candidate", candidateId },
    orderBy: { createdAt: "desc" },
    select: { id: true, artifactDigest: true, createdAt: true },
  });
}
