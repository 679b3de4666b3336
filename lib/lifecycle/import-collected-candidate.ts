/**
 * The lifecycle's use of the candidate module: the archive collected from the guest goes through
 * the hostile-archive validation and import, under the task's archive limit, into the operator's
 * candidate repository. Keyed by task and round: a retry after a restart yields the same candidate.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { createFsArtifactStore, defaultArtifactRoot } from "../artifacts/fs-artifact-store";
import { DEFAULT_ARCHIVE_LIMITS } from "../candidate/archive-limits";
import { candidateRepoPathFor } from "../candidate/candidate-git";
import { importCandidate } from "../candidate/import-candidate";
import type { TCandidateManifest } from "../contract/candidate-manifest";
import type { Task } from "../db/generated/client";
import { mirrorPathFor } from "../repos/mirror";
import { parseTaskLimits } from "./provision-task";
import { stagingDir, type TaskRunContext } from "../tasks/task-run-context";

export async function importCollectedCandidate(options: {
  ctx: TaskRunContext;
  task: Task;
  repository: string;
  archivePath: string;
  declaredChangedPaths: readonly string[];
  declaredArchiveDigest?: string;
  /** a revision round's previous candidate (the tree its guest started from) */
  previous?: { candidateId: string; headSha: string };
}): Promise<TCandidateManifest> {
  const { ctx, task } = options;
  const limits = parseTaskLimits(task);
  const workDir = path.join(stagingDir(ctx.env, task.id), "import");
  await fs.mkdir(workDir, { recursive: true, mode: 0o700 });
  return importCandidate({
    db: ctx.db,
    task: {
      id: task.id,
      issueNumber: task.issueNumber,
      repository: options.repository,
      baseRef: task.baseRef,
      baseSha: task.baseSha,
    },
    archivePath: options.archivePath,
    declaredChangedPaths: options.declaredChangedPaths,
    declaredArchiveDigest: options.declaredArchiveDigest,
    mirrorPath: mirrorPathFor(ctx.env.dataDir, options.repository),
    candidateRepoPath: candidateRepoPathFor(ctx.env.dataDir, options.repository),
    artifactStore: createFsArtifactStore({ rootDir: defaultArtifactRoot(ctx.env.dataDir) }),
    limits: {
      ...DEFAULT_ARCHIVE_LIMITS,
      maxArchiveBytes: Math.min(DEFAULT_ARCHIVE_LIMITS.maxArchiveBytes, limits.maxArchiveBytes),
    },
    workDir,
    round: task.round,
    previous: options.previous,
  });
}
