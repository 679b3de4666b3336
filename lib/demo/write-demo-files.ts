/**
 * Writes a demo target's repository: the files as data, one commit on `main` with fixed commit
 * metadata, so the same files always give the same SHA (the demo targets are written by the
 * control plane itself, never fetched).
 */
import fs from "node:fs/promises";
import path from "node:path";
import { commitWorktree } from "../git/git-commit";
import { runGit } from "../git/run-git";

/** Creates a working repository at `dir` holding `files`, committed once on `main`; returns its path and commit SHA. */
export async function writeDemoFiles(
  dir: string,
  input: { files: Record<string, string>; message: string },
): Promise<{ path: string; sha: string }> {
  await fs.mkdir(dir, { recursive: true });
  await runGit({ cwd: dir, args: ["init", "--quiet", "--initial-branch=main"] });
  for (const [file, content] of Object.entries(input.files)) {
    await fs.mkdir(path.join(dir, path.dirname(file)), { recursive: true });
    await fs.writeFile(path.join(dir, file), content);
  }
  const sha = await commitWorktree({
    worktreePath: dir,
    metadata: {
      authorName: "School-Core demo",
      authorEmail: "demo@school-core.invalid",
      committerName: "School-Core demo",
      committerEmail: "demo@school-core.invalid",
      epochSeconds: 1_780_000_000,
      message: input.message,
    },
  });
  return { path: dir, sha };
}
