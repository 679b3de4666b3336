/**
 * Creates (idempotently) a bare repository the local forge serves at
 * `<url>/<owner>/<name>.git`, under DATA_DIR/forge/<owner>/<name>.git. Tests and the demo seed
 * push a base branch into it, then point a TargetRepository's cloneUrl at it.
 */
import fs from "node:fs/promises";
import { AppError } from "../../lib/errors";
import { writeNeutralAttributes } from "../../lib/git/git-bare-repository";
import { runGit } from "../../lib/git/run-git";
import { forgeGitDir, parseForgeFullName } from "./forge-paths";

export type TCreateForgeRepositoryOptions = { dataDir: string; repository: string; defaultBranch?: string };

export async function createForgeRepository(
  options: TCreateForgeRepositoryOptions,
): Promise<{ gitDir: string; repository: string; isNew: boolean }> {
  const repo = parseForgeFullName(options.repository);
  if (!repo)
    throw new AppError("VALIDATION_FAILED", "A forge repository name must be owner/name (letters, digits, _ . -).");
  const defaultBranch = options.defaultBranch ?? "main";
  if (!/^[A-Za-z0-9_.\/-]{1,100}$/.test(defaultBranch) || defaultBranch.includes(".."))
    throw new AppError("VALIDATION_FAILED", "Invalid default branch name.");
  const gitDir = forgeGitDir(options.dataDir, repo);
  const exists = await fs.stat(`${gitDir}/HEAD`).then(
    () => true,
    () => false,
  );
  if (!exists) {
    await fs.mkdir(gitDir, { recursive: true });
    await runGit({ args: ["init", "--quiet", "--bare", `--initial-branch=${defaultBranch}`, "--", gitDir] });
    await writeNeutralAttributes(gitDir);
    // Pushes over smart HTTP are how publication reaches the forge.
    await runGit({ gitDir, args: ["config", "http.receivepack", "true"] });
  }
  return { gitDir, repository: repo.fullName, isNew: !exists };
}
