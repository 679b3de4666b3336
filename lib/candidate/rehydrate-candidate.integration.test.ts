import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TCandidateManifest } from "../contract/candidate-manifest";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { createTestDatabase } from "../testing/test-database";
import { DEFAULT_ARCHIVE_LIMITS } from "./archive-limits";
import { writeCandidateCommit } from "./candidate-commit";
import { acceptedOrThrow, importCandidate } from "./import-candidate";
import { rehydrateCandidate, type TRehydrateCandidateOptions } from "./rehydrate-candidate";
import { BASE_TREE, createImportFixture, type TImportFixture } from "./testing/candidate-fixtures";
import { validateArchive } from "./validate-archive";

let db: Db;
let fx: TImportFixture;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  fx = await createImportFixture(db);
});
afterAll(async () => {
  await fx?.cleanup();
});

const SNAPSHOT = {
  ...BASE_TREE,
  "src/app.ts": "export const answer = 42;\n",
  "src/extra.bin": { content: Buffer.from([0, 1, 2, 255, 254, 0]), mode: 0o755 },
};

async function importOne(): Promise<TCandidateManifest> {
  const task = await fx.createTask({ createdAt: new Date("2026-05-06T07:08:09Z") });
  return importCandidate({
    db,
    task,
    archivePath: await fx.writeSnapshot(SNAPSHOT),
    declaredChangedPaths: ["src/app.ts", "src/extra.bin"],
    mirrorPath: fx.mirrorPath,
    candidateRepoPath: fx.candidateRepoPath,
    artifactStore: fx.artifactStore,
    limits: DEFAULT_ARCHIVE_LIMITS,
    workDir: fx.workDir,
  });
}

function rehydrate(manifest: TCandidateManifest, overrides: Partial<TRehydrateCandidateOptions> = {}) {
  return rehydrateCandidate({
    db,
    candidateId: manifest.candidateId,
    mirrorPath: fx.mirrorPath,
    artifactStore: fx.artifactStore,
    limits: DEFAULT_ARCHIVE_LIMITS,
    workDir: fx.workDir,
    actorId: null,
    ...overrides,
  });
}

async function expectAppError(promise: Promise<unknown>, code: string, message?: RegExp): Promise<void> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected ${code}`).toBeInstanceOf(AppError);
  expect((error as AppError).code, (error as AppError).message).toBe(code);
  if (message) expect((error as AppError).message).toMatch(message);
}

function artifactFile(digest: string): string {
  return path.join(fx.artifactRoot, "sha256", digest.slice(0, 2), digest);
}

async function lastAudit(candidateId: string) {
  return db.auditLog.findFirst({ where: { targetType: "candidate", targetId: candidateId }, orderBy: { id: "desc" } });
}

describe("rehydrateCandidate", () => {
  it("rebuilds the exact recorded head, and can restore the branch elsewhere", async () => {
    const manifest = await importOne();
    const result = await rehydrate(manifest);
    expect(result).toMatchObject({
      verdict: "reproduced",
      headSha: manifest.headSha,
      rebuiltHeadSha: manifest.headSha,
      diffDigest: manifest.diffDigest,
      isRestored: false,
    });
    expect((await lastAudit(manifest.candidateId))?.detail).toMatchObject({ outcome: "reproduced" });
    expect(await fs.readdir(fx.workDir)).toEqual([]);

    const restored = path.join(fx.root, "restored.git");
    const again = await rehydrate(manifest, { restoreToRepoPath: restored });
    expect(again.isRestored).toBe(true);
    expect(
      execFileSync("git", [`--git-dir=${restored}`, "rev-parse", `refs/heads/${manifest.branch}`])
        .toString()
        .trim(),
    ).toBe(manifest.headSha);
  });

  it("rebuilds with the same recipe import used: writeCandidateCommit on the recorded inputs gives the imported head", async () => {
    const manifest = await importOne();
    const staging = await fs.mkdtemp(path.join(fx.root, "recipe-"));
    const archivePath = path.join(staging, "archive.tar");
    await fx.artifactStore.readToFile({ digest: manifest.archiveDigest, destPath: archivePath });
    const spoolPath = path.join(staging, "content.spool");
    const verdict = acceptedOrThrow(await validateArchive({ archivePath, limits: DEFAULT_ARCHIVE_LIMITS, spoolPath }));
    const task = await db.task.findUniqueOrThrow({ where: { id: manifest.taskId } });
    const headSha = await writeCandidateCommit({
      gitDir: path.join(staging, "scratch.git"),
      mirrorPath: fx.mirrorPath,
      baseSha: manifest.baseSha,
      identity: {
        taskId: manifest.taskId,
        issueNumber: manifest.issueNumber,
        repository: manifest.repository,
        taskCreatedAt: task.createdAt,
      },
      entries: verdict.entries,
      spoolPath,
    });
    expect(headSha).toBe(manifest.headSha);
    expect((await rehydrate(manifest)).rebuiltHeadSha).toBe(headSha);
  });

  it("fails closed on a flipped byte in the artifact", async () => {
    const manifest = await importOne();
    const file = artifactFile(manifest.archiveDigest);
    const bytes = await fs.readFile(file);
    bytes[600] = bytes[600]! ^ 0x01;
    await fs.chmod(file, 0o644);
    await fs.writeFile(file, bytes);
    await expectAppError(rehydrate(manifest), "ARTIFACT_CORRUPT", /does not match its digest/);
    expect((await lastAudit(manifest.candidateId))?.detail).toMatchObject({ outcome: "ARTIFACT_CORRUPT" });
    expect(await fs.readdir(fx.workDir)).toEqual([]);
  });

  it("fails closed on a missing artifact", async () => {
    const manifest = await importOne();
    await fs.rm(artifactFile(manifest.archiveDigest));
    await expectAppError(rehydrate(manifest), "ARTIFACT_CORRUPT", /missing/);
  });

  it("fails closed when the task's base changed", async () => {
    const manifest = await importOne();
    await db.task.update({ where: { id: manifest.taskId }, data: { baseSha: "2".repeat(40) } });
    await expectAppError(rehydrate(manifest), "CANDIDATE_MISMATCH", /base/);
  });

  it("fails closed when the base is gone from the mirror", async () => {
    const manifest = await importOne();
    const emptyMirror = path.join(fx.root, "empty-mirror.git");
    execFileSync("git", ["init", "-q", "--bare", emptyMirror]);
    await expectAppError(rehydrate(manifest, { mirrorPath: emptyMirror }), "BASE_UNAVAILABLE");
  });

  it("fails closed when the commit date would differ", async () => {
    const manifest = await importOne();
    await db.task.update({ where: { id: manifest.taskId }, data: { createdAt: new Date("2026-05-06T07:08:10Z") } });
    await expectAppError(rehydrate(manifest), "CANDIDATE_MISMATCH", /rebuilt head differs/);
    // Sub-second changes do not move the commit date (whole seconds): still reproduced.
    await db.task.update({ where: { id: manifest.taskId }, data: { createdAt: new Date("2026-05-06T07:08:09.900Z") } });
    expect((await rehydrate(manifest)).verdict).toBe("reproduced");
  });

  it("refuses to restore over a branch that points elsewhere", async () => {
    const manifest = await importOne();
    const restored = path.join(fx.root, "restore-conflict.git");
    execFileSync("git", ["init", "-q", "--bare", restored]);
    execFileSync("git", [`--git-dir=${restored}`, "fetch", "-q", fx.mirrorPath, fx.baseSha]);
    execFileSync("git", [`--git-dir=${restored}`, "update-ref", `refs/heads/${manifest.branch}`, fx.baseSha]);
    await expectAppError(rehydrate(manifest, { restoreToRepoPath: restored }), "STATE_CONFLICT");
    expect(
      execFileSync("git", [`--git-dir=${restored}`, "rev-parse", `refs/heads/${manifest.branch}`])
        .toString()
        .trim(),
    ).toBe(fx.baseSha);
  });

  it("is NOT_FOUND for an unknown candidate", async () => {
    await expectAppError(
      rehydrateCandidate({
        db,
        candidateId: "cand_0000",
        mirrorPath: fx.mirrorPath,
        artifactStore: fx.artifactStore,
        limits: DEFAULT_ARCHIVE_LIMITS,
        workDir: fx.workDir,
      }),
      "NOT_FOUND",
    );
  });
});
