/**
 * The operator's separate, audited decision to build a bundle from a CANDIDATE's lockfile
 * (issue 18). Never automatic: the trusted checks always use the base commit's bundle, and a
 * candidate that changed its lockfile is checked with the base dependencies. The bundle built
 * here is recorded with source "candidate" and the candidate's id, and listed on the
 * repository's page; the setup run itself is the same trusted builder with the same broker.
 */
import { recordAudit } from "../audit";
import { candidateRepoPathFor } from "../candidate/candidate-git";
import type { DependencyBundle } from "../db/generated/client";
import { AppError } from "../errors";
import { runDependencySetup, type TDependencyDeps } from "./run-dependency-setup";

export async function rebuildFromCandidateLockfile(
  deps: TDependencyDeps,
  input: { candidateId: string; actorId: string | null },
): Promise<DependencyBundle> {
  const candidate = await deps.db.candidate.findUnique({ where: { id: input.candidateId } });
  if (!candidate) throw new AppError("NOT_FOUND", "No such candidate.");
  const repo = await deps.db.targetRepository.findUnique({ where: { name: candidate.repository } });
  if (!repo) throw new AppError("NOT_FOUND", "The candidate's repository is not a target any more.");
  await recordAudit(deps.db, {
    actorId: input.actorId,
    action: "dependencies.rebuild-from-candidate",
    targetType: "candidate",
    targetId: candidate.id,
    detail: { repository: repo.name, headSha: candidate.headSha },
  });
  return runDependencySetup(deps, {
    repositoryId: repo.id,
    sha: candidate.headSha,
    gitDir: candidateRepoPathFor(deps.env.dataDir, candidate.repository),
    reason: "candidate lockfile (operator decision)",
    candidateId: candidate.id,
    actorId: input.actorId,
    machineSlot: "own",
  });
}
