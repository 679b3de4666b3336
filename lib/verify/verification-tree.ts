/**
 * The tree the verifier checks: the candidate's head tree, exported by the control plane from its
 * own candidate repository (never the guest's archive), with the manifest's protected paths taken
 * from the base commit instead — so the student cannot weaken the tests the trusted checks run.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { archiveTree } from "../git/git-plumbing";
import { runGit } from "../git/run-git";

export async function writeVerificationArchive(options: {
  gitDir: string;
  baseSha: string;
  headSha: string;
  protectedPaths: readonly string[];
  outputPath: string;
}): Promise<{ treeSha: string }> {
  const { gitDir, baseSha, headSha } = options;
  const indexDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-verify-index-"));
  const env = { GIT_INDEX_FILE: path.join(indexDir, "index") };
  // update-index insists on a work tree; an empty one is never read (only the index is edited).
  const workTree = path.join(indexDir, "empty-worktree");
  await fs.mkdir(workTree);
  try {
    await runGit({ gitDir, env, args: ["read-tree", `${headSha}^{tree}`] });
    for (const prefix of options.protectedPaths) {
      const pathspec = `:(literal)${prefix}`;
      const current = await runGit({
        gitDir,
        env,
        args: ["ls-files", "-z", "--cached", "--", pathspec],
        maxStdoutBytes: 16 * 1024 * 1024,
      });
      const paths = current.stdout.toString("utf8").split("\0").filter(Boolean);
      if (paths.length)
        await runGit({
          gitDir,
          workTree,
          env,
          args: ["update-index", "-z", "--force-remove", "--stdin"],
          input: paths.join("\0") + "\0",
        });
      const base = await runGit({
        gitDir,
        args: ["ls-tree", "-r", "-z", "--full-tree", baseSha, "--", pathspec],
        maxStdoutBytes: 16 * 1024 * 1024,
      });
      if (base.stdout.length)
        await runGit({ gitDir, workTree, env, args: ["update-index", "-z", "--index-info"], input: base.stdout });
    }
    const tree = (await runGit({ gitDir, env, args: ["write-tree"] })).stdout.toString("utf8").trim();
    await archiveTree({ gitDir, treeish: tree, outputPath: options.outputPath });
    return { treeSha: tree };
  } finally {
    await fs.rm(indexDir, { recursive: true, force: true });
  }
}
