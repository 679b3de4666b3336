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
import { splitNul, ZERO_SHA } from "../git/git-values";

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
    if (options.protectedPaths.length > 0) {
      // Every protected path at once: what the head has there is removed, what the base has there
      // is put back — one listing of each tree and one index edit, however many paths there are.
      const pathspecs = options.protectedPaths.map((prefix) => `:(literal)${prefix}`);
      const listAt = (sha: string) =>
        runGit({
          gitDir,
          args: ["ls-tree", "-r", "-z", "--full-tree", sha, "--", ...pathspecs],
          maxStdoutBytes: 16 * 1024 * 1024,
        }).then((listing) => listing.stdout);
      const [atHead, atBase] = await Promise.all([listAt(headSha), listAt(baseSha)]);
      // `--index-info` takes ls-tree's lines as they are; mode 0 removes a path.
      const removals = splitNul(atHead).map((line) => `0 ${ZERO_SHA}\t${line.slice(line.indexOf("\t") + 1)}\0`);
      const edits = Buffer.concat([Buffer.from(removals.join(""), "utf8"), atBase]);
      if (edits.length > 0)
        await runGit({ gitDir, workTree, env, args: ["update-index", "-z", "--index-info"], input: edits });
    }
    const tree = (await runGit({ gitDir, env, args: ["write-tree"] })).stdout.toString("utf8").trim();
    await archiveTree({ gitDir, treeish: tree, outputPath: options.outputPath });
    return { treeSha: tree };
  } finally {
    await fs.rm(indexDir, { recursive: true, force: true });
  }
}
