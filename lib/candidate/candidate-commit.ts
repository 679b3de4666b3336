/**
 * The one recipe for a candidate commit, used by import and by rehydration alike: the repository
 * opened the same way, the base copied by SHA from our own mirror, the base's submodule links
 * carried over, the fixed author/committer/dates/message derived from the task, and the tree
 * written by fast-import from the validated entries.
 *
 * Why one function: rehydration proves a candidate by rebuilding its head and comparing SHAs.
 * That proof only means something if both sides build the commit the same way; two copies of the
 * recipe could drift apart and turn every proof into a mismatch (or, worse, agree by accident on
 * a recipe that import no longer uses). The inputs below are the whole of what determines the SHA
 * (candidate-commit.integration.test.ts).
 */
import { buildCandidateCommit } from "./build-candidate-commit";
import { candidateCommitMetadata, type TCandidateMetadataInput } from "./candidate-commit-metadata";
import { bringBaseCommit, ensureBareRepository, readBaseGitlinks } from "./candidate-git";
import type { TValidatedEntry } from "./tar-validator";

export type TWriteCandidateCommitOptions = {
  /** The bare repository to write into (created on first use). */
  gitDir: string;
  /** The control plane's own bare mirror, where the base commit comes from. */
  mirrorPath: string;
  baseSha: string;
  /** The task's identity and round: the commit's metadata is derived from these alone. */
  identity: TCandidateMetadataInput;
  /** The validated archive's entries, and the spool their bytes were written to. */
  entries: readonly TValidatedEntry[];
  spoolPath: string;
};

/** Writes the candidate commit into `gitDir` and returns its SHA; no branch points at it yet. */
export async function writeCandidateCommit(options: TWriteCandidateCommitOptions): Promise<string> {
  const { gitDir, baseSha, entries } = options;
  await ensureBareRepository(gitDir);
  await bringBaseCommit({ gitDir, mirrorPath: options.mirrorPath, baseSha });
  const gitlinks = await readBaseGitlinks({ gitDir, baseSha, entries });
  const metadata = candidateCommitMetadata(options.identity);
  return buildCandidateCommit({ gitDir, baseSha, entries, gitlinks, spoolPath: options.spoolPath, metadata });
}
