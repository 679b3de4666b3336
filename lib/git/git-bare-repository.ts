/**
 * Repositories the control plane owns: created bare, with neutral attributes that no tree inside
 * can switch back on, and safe to create from several processes at once.
 */
import { randomBytes } from "node:crypto";
import fsp from "node:fs/promises";
import path from "node:path";
import { gitError, runGit } from "./run-git";

/**
 * Attributes that could change bytes (eol, filters, ident, encodings) or hide files from an
 * archive (export-ignore/export-subst) are set to "unspecified" for every path. info/attributes
 * outranks every in-tree .gitattributes, so a hostile tree cannot re-enable them.
 */
const NEUTRAL_ATTRIBUTES =
  "* !text !eol !crlf !diff !merge !filter !ident !working-tree-encoding !export-ignore !export-subst !whitespace !delta\n";

/**
 * Makes info/attributes neutral. It is checked on every import, so it is written only when it
 * differs, to a private name renamed over: several processes may write it at once.
 */
export async function writeNeutralAttributes(gitDir: string): Promise<void> {
  const infoDir = path.join(gitDir, "info");
  const current = await fsp.readFile(path.join(infoDir, "attributes"), "utf8").catch(() => null);
  if (current === NEUTRAL_ATTRIBUTES) return;
  await fsp.mkdir(infoDir, { recursive: true });
  const staging = path.join(infoDir, `.attributes-${randomBytes(6).toString("hex")}`);
  try {
    await fsp.writeFile(staging, NEUTRAL_ATTRIBUTES, { flag: "wx" });
    await fsp.rename(staging, path.join(infoDir, "attributes"));
  } finally {
    await fsp.rm(staging, { force: true });
  }
}

const isGitDirAt = (repoPath: string) =>
  fsp.stat(path.join(repoPath, "HEAD")).then(
    (stat) => stat.isFile(),
    () => false,
  );

/**
 * Creates a bare repository owned by the control plane, with neutral attributes, or re-opens one.
 * Safe when several processes do it at once (two workers importing the first candidates of one
 * repository did, issue 16): an existing repository is never re-initialised (`git init` takes its
 * config lock, and a concurrent init then fails on it), and a new one is made in a private sibling
 * directory and renamed into place, so nobody sees it half-made; when another process's rename
 * wins, theirs is used.
 */
export async function initBareRepository(options: { repoPath: string }): Promise<void> {
  const { repoPath } = options;
  if (!(await isGitDirAt(repoPath))) {
    // DATA_DIR/mirrors and DATA_DIR/candidates hold every target repository and candidate: owner-only.
    await fsp.mkdir(path.dirname(repoPath), { recursive: true, mode: 0o700 });
    const staging = `${repoPath}.init-${randomBytes(6).toString("hex")}`;
    try {
      await runGit({ args: ["init", "--bare", "--quiet", "--initial-branch=main", "--", staging] });
      await writeNeutralAttributes(staging);
      // Replaces nothing but an empty directory (what an interrupted older start left).
      await fsp.rename(staging, repoPath).catch(async (error: NodeJS.ErrnoException) => {
        const isTaken = error.code === "ENOTEMPTY" || error.code === "EEXIST";
        if (!isTaken) throw error;
        if (!(await isGitDirAt(repoPath)))
          throw gitError("usage", "init", "the repository path exists, is not empty and is not a git repository");
      });
    } finally {
      await fsp.rm(staging, { recursive: true, force: true });
    }
  }
  await writeNeutralAttributes(repoPath);
}
