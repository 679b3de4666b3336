/**
 * What the agent-code tests check of the artifact store: which objects it holds, and that a refused
 * call failed with its typed code.
 */
import fs from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { defaultArtifactRoot } from "../../artifacts/fs-artifact-store";
import { AppError } from "../../errors";

/** The store's objects as `ab/abcdef…`, sorted. */
export async function storedObjects(dataDir: string): Promise<string[]> {
  const root = path.join(defaultArtifactRoot(dataDir), "sha256");
  const dirs = await fs.readdir(root).catch(() => [] as string[]);
  return (await Promise.all(dirs.map(async (d) => (await fs.readdir(path.join(root, d))).map((f) => `${d}/${f}`))))
    .flat()
    .sort();
}

export async function expectRefused(promise: Promise<unknown>, code: string): Promise<AppError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe(code);
  return error as AppError;
}
