/**
 * The dependencies a candidate's trusted checks run with (issue 18): always the bundle built from
 * the BASE commit's lockfile — a candidate cannot choose what gets installed for its own checks.
 * When the candidate changed the lockfile (or removed it), the evidence says so in plain words;
 * rebuilding from the candidate's lockfile is a separate operator decision (rebuild-from-candidate.ts).
 */
import { candidateRepoPathFor } from "../candidate/candidate-git";
import { DEPENDENCIES_CHANGED_NOTE, type TEvidenceDependencies } from "../contract/verification-evidence";
import { AppError } from "../errors";
import { readRecipeInputs } from "./read-recipe-inputs";
import { resolveRecipe } from "./recipes";
import { ensureDependencyBundle } from "./ensure-dependency-bundle";
import { loadDeliverableBundle, type TDeliverableBundle } from "./deliver-dependency-bundle";
import { parseSetupRecipe, type TDependencyDeps } from "./run-dependency-setup";

export async function prepareVerificationDependencies(
  deps: TDependencyDeps,
  candidate: { repository: string; baseSha: string; headSha: string },
): Promise<{ deliverable: TDeliverableBundle; evidence: TEvidenceDependencies } | null> {
  const repo = await deps.db.targetRepository.findUnique({ where: { name: candidate.repository } });
  if (!repo) throw new AppError("NOT_FOUND", `Repository ${candidate.repository.slice(0, 200)} is not a target.`);
  const recipe = parseSetupRecipe(repo.setupRecipe);
  if (!recipe) return null;
  const bundle = await ensureDependencyBundle(deps, {
    repositoryId: repo.id,
    sha: candidate.baseSha,
    reason: "verification of a candidate on this base",
    machineSlot: "task",
  });
  if (!bundle) return null;
  let candidateLockfileDigest: string | null;
  try {
    const inputs = await readRecipeInputs({
      gitDir: candidateRepoPathFor(deps.env.dataDir, candidate.repository),
      sha: candidate.headSha,
      inputFiles: resolveRecipe(recipe).inputFiles,
    });
    candidateLockfileDigest = inputs.lockfileDigest;
  } catch (error) {
    // a candidate that deleted or replaced a lockfile changed its dependencies too
    if (!(error instanceof AppError) || error.code !== "DEPENDENCY_SETUP_FAILED") throw error;
    candidateLockfileDigest = null;
  }
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
    },
  };
}
