/**
 * Which dependency recipe an agent profile's code selects (issue 26), and the recipe's input files
 * read from that code — the same recipes and the same inputs a repository's recipe reads
 * (lib/dependencies/recipes.ts), found at the top of the code instead of named by the operator: package-lock.json
 * (npm-ci), else pnpm-lock.yaml (pnpm-install), else a requirements.txt that pins hashes
 * (pip-require-hashes). One recipe per code: the first found. A requirements.txt without a single
 * `--hash=` is not a lockfile (pip's --require-hashes would refuse it) and selects nothing, as a
 * package.json alone does.
 *
 * The files are read from the archive through the same hostile-archive validator the code was
 * stored with (contents spooled by offset, never extracted by archive path); a lockfile that is a
 * symlink, or one missing the manifest its recipe needs, is refused, as a repository's is.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { sha256Hex } from "../canonical-json";
import type { TArchiveLimits } from "../candidate/archive-limits";
import type { TValidatedEntry } from "../candidate/tar-validator";
import { validateArchive } from "../candidate/validate-archive";
import { AppError } from "../errors";
import {
  lockfileDigestOf,
  RECIPE_INPUT_FILES,
  type TLockfileRecipeKind,
  type TRecipeInput,
  type TRecipeInputs,
} from "../contract/lockfiles";

/** In order: the first lockfile present at the top of the code selects its recipe. */
const LOCKFILE_RECIPES: readonly { lockfile: string; kind: TLockfileRecipeKind }[] = [
  { lockfile: "package-lock.json", kind: "npm-ci" },
  { lockfile: "pnpm-lock.yaml", kind: "pnpm-install" },
  { lockfile: "requirements.txt", kind: "pip-require-hashes" },
];

export type TAgentLockfile =
  { kind: "none" } | { kind: "found"; recipeKind: TLockfileRecipeKind; inputs: TRecipeInputs };

const isPinnedRequirements = (bytes: Buffer) => /(^|\s)--hash[= ]sha256:/m.test(bytes.toString("utf8"));

/** Picks the recipe and reads its inputs from validated entries whose contents are in `spoolPath`. */
export async function pickAgentLockfile(
  entries: readonly TValidatedEntry[],
  spoolPath: string,
): Promise<TAgentLockfile> {
  const byPath = new Map(entries.map((e) => [e.path, e]));
  const read = async (file: string): Promise<TRecipeInput | null> => {
    const entry = byPath.get(file);
    if (!entry) return null;
    if (entry.kind !== "file")
      throw new AppError(
        "VALIDATION_FAILED",
        `The agent's ${file} is a symlink; a lockfile and its manifest must be regular files.`,
      );
    const bytes = Buffer.alloc(entry.size);
    const handle = await fs.open(spoolPath, "r");
    try {
      await handle.read(bytes, 0, entry.size, entry.spoolOffset);
    } finally {
      await handle.close();
    }
    return { path: file, sha256: sha256Hex(bytes), bytes };
  };
  for (const { lockfile, kind } of LOCKFILE_RECIPES) {
    const found = await read(lockfile);
    if (!found || (kind === "pip-require-hashes" && !isPinnedRequirements(found.bytes))) continue;
    const files: TRecipeInput[] = [];
    // The recipe's own input list (the lockfile and its manifest), as a repository's recipe reads it.
    for (const file of RECIPE_INPUT_FILES[kind]) {
      const input = file === lockfile ? found : await read(file);
      if (!input)
        throw new AppError(
          "VALIDATION_FAILED",
          `The agent's code has ${lockfile} but no ${file}; the ${kind} recipe needs both.`,
        );
      files.push(input);
    }
    const lockfiles = files.map((f) => ({ path: f.path, sha256: f.sha256 }));
    return {
      kind: "found",
      recipeKind: kind,
      inputs: { files, lockfiles, lockfileDigest: lockfileDigestOf(lockfiles) },
    };
  }
  return { kind: "none" };
}

/** The lockfile of an agent code archive (a file on disk), validated again under `limits`. */
export async function readAgentCodeLockfile(options: {
  archivePath: string;
  limits: TArchiveLimits;
}): Promise<TAgentLockfile> {
  const spoolPath = path.join(path.dirname(options.archivePath), `${path.basename(options.archivePath)}.spool`);
  try {
    const verdict = await validateArchive({ archivePath: options.archivePath, limits: options.limits, spoolPath });
    // Stored only after an accepted verdict under these limits: a refusal now is a damaged store.
    if (verdict.kind === "refused")
      throw new AppError("ARTIFACT_CORRUPT", "The stored agent code no longer passes the archive rules.");
    return await pickAgentLockfile(verdict.entries, spoolPath);
  } finally {
    await fs.rm(spoolPath, { force: true });
  }
}
