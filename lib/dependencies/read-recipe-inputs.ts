/**
 * The recipe's input files (the lockfile and its manifest) read from one commit of the control
 * plane's own git copy — the base commit, never a guest's tree (issue 18: "the recipe reads only
 * the lockfile of the base commit"). Their digest is the "lockfile digest" a bundle is keyed by.
 * Files are read as blobs (no checkout, no attributes, no filters); a missing file, a symlink or
 * a submodule in their place is refused, since the builder would otherwise see something else.
 */
import { sha256Hex } from "../canonical-json";
import { lockfileDigestOf, type TRecipeInput, type TRecipeInputs } from "../contract/lockfiles";
import { AppError } from "../errors";
import { runGit } from "../git/run-git";
import { packUstar } from "./ustar";

const MAX_INPUT_FILE_BYTES = 32 * 1024 * 1024;

export async function readRecipeInputs(options: {
  gitDir: string;
  sha: string;
  inputFiles: readonly string[];
}): Promise<TRecipeInputs> {
  const files: TRecipeInput[] = [];
  for (const file of options.inputFiles) {
    const listed = await runGit({
      gitDir: options.gitDir,
      args: ["ls-tree", "-z", options.sha, "--", file],
      maxStdoutBytes: 64 * 1024,
    });
    const entry = listed.stdout
      .toString("utf8")
      .split("\0")
      .find((line) => line.endsWith(`\t${file}`));
    if (!entry)
      throw new AppError(
        "DEPENDENCY_SETUP_FAILED",
        `The commit ${options.sha.slice(0, 12)} has no ${file}; the recipe needs it.`,
      );
    const [mode, type] = entry.split(/[ \t]/);
    if (type !== "blob" || (mode !== "100644" && mode !== "100755"))
      throw new AppError(
        "DEPENDENCY_SETUP_FAILED",
        `${file} at ${options.sha.slice(0, 12)} is not a regular file (mode ${mode}).`,
      );
    const blob = await runGit({
      gitDir: options.gitDir,
      args: ["cat-file", "blob", `${options.sha}:${file}`],
      maxStdoutBytes: MAX_INPUT_FILE_BYTES,
    });
    files.push({ path: file, sha256: sha256Hex(blob.stdout), bytes: blob.stdout });
  }
  const lockfiles = files.map((f) => ({ path: f.path, sha256: f.sha256 }));
  return { files, lockfiles, lockfileDigest: lockfileDigestOf(lockfiles) };
}

/** The inputs as an uncompressed ustar archive for the builder (regular files, fixed metadata). */
export function packRecipeInputs(files: readonly TRecipeInput[]): Buffer {
  return packUstar(files.map((f) => ({ path: f.path, bytes: f.bytes })));
}
