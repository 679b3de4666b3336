/**
 * The lockfiles School-Core's fixed dependency recipes read (issue 18), and the digest a bundle is
 * keyed by: which files each recipe reads (its lockfile and the manifest beside it), and the
 * digest of a set of such files — their paths and contents, order-free. Here, below the
 * repository recipes (lib/dependencies) and agent profiles (lib/agents, whose code may carry a
 * lockfile, issue 26), so both read lockfiles the same way.
 */
import { canonicalDigest } from "../canonical-json";

/** The recipes whose inputs are fixed (the custom recipe names its own). */
export const LOCKFILE_RECIPE_KINDS = ["npm-ci", "pnpm-install", "pip-require-hashes"] as const;
export type TLockfileRecipeKind = (typeof LOCKFILE_RECIPE_KINDS)[number];

/** The files each fixed recipe reads: its lockfile and the manifest beside it. */
export const RECIPE_INPUT_FILES = {
  "npm-ci": ["package.json", "package-lock.json"],
  "pnpm-install": ["package.json", "pnpm-lock.yaml"],
  "pip-require-hashes": ["requirements.txt"],
} as const satisfies Record<TLockfileRecipeKind, readonly string[]>;

export type TRecipeInput = { path: string; sha256: string; bytes: Buffer };
export type TRecipeInputs = {
  files: TRecipeInput[];
  lockfileDigest: string;
  lockfiles: { path: string; sha256: string }[];
};

/** The digest of a set of input files: their paths and contents, order-free. */
export function lockfileDigestOf(files: readonly { path: string; sha256: string }[]): string {
  return canonicalDigest(
    [...files].map((f) => ({ path: f.path, sha256: f.sha256 })).sort((a, b) => (a.path < b.path ? -1 : 1)),
  );
}
