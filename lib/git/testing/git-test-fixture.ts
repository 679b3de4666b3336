/**
 * For the lib/git tests: a private temporary root, work repositories created through the runner,
 * fixed commit metadata (same tree, same SHA) and a check that a promise fails with GIT_FAILED of
 * a given kind.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { expect } from "vitest";
import { AppError } from "../../errors";
import type { TCommitMetadata } from "../git-commit";
import { runGit } from "../run-git";

export const TEST_COMMIT_METADATA: TCommitMetadata = {
  authorName: "Test Author",
  authorEmail: "author@example.invalid",
  committerName: "Test Committer",
  committerEmail: "committer@example.invalid",
  epochSeconds: 1_700_000_000,
  message: "fixed message\n",
};

export function makeTempRoot(prefix: string): Promise<string> {
  return fs.mkdtemp(path.join(os.tmpdir(), prefix));
}

/** A non-bare repository (branch main) at `<root>/<name>`. */
export async function makeWorkRepo(root: string, name: string): Promise<string> {
  const dir = path.join(root, name);
  await fs.mkdir(dir, { recursive: true });
  await runGit({ args: ["init", "--quiet", "--initial-branch=main", "--", dir] });
  return dir;
}

export async function pathExists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

export async function expectGitFailure(promise: Promise<unknown>, kind: string): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe("GIT_FAILED");
  expect((error as AppError).details?.kind).toBe(kind);
  return error as AppError;
}
