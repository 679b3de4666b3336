import fs from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { DEFAULT_ARCHIVE_LIMITS } from "../../../lib/candidate/archive-limits";
import { importCandidate } from "../../../lib/candidate/import-candidate";
import { BASE_TREE, createImportFixture } from "../../../lib/candidate/testing/candidate-fixtures";
import { tarArchive, tarFile } from "../../../lib/candidate/testing/tar-builder";
import { runCli } from "../../../lib/testing/run-cli";
import { createTestDatabase } from "../../../lib/testing/test-database";

describe("schoolcore candidate", async () => {
  const { db, url } = await createTestDatabase();
  const fx = await createImportFixture(db);
  afterAll(() => fx.cleanup());
  const env = { DATABASE_URL: url, DATA_DIR: fx.dataDir };

  it("check accepts a valid archive and reports its digest", async () => {
    const archive = await fx.writeSnapshot(BASE_TREE);
    const result = await runCli(["candidate", "check", archive, "--json"], { env });
    expect(result.code, result.stderr).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({ verdict: "accepted", files: 4, symlinks: 1 });
  });

  it("check refuses a hostile archive with its reasons and exit code 1, writing nothing", async () => {
    const archive = await fx.writeBytes(tarArchive(tarFile("../escaped.txt", "x"), tarFile(".git/config", "y")));
    const before = await fs.readdir(fx.root);
    const result = await runCli(["candidate", "check", archive, "--json"], { env });
    expect(result.code).toBe(1);
    const out = JSON.parse(result.stdout);
    expect(out.verdict).toBe("refused");
    expect(out.reasons.map((r: { code: string }) => r.code)).toEqual([
      "ARCHIVE_PATH_TRAVERSAL",
      "ARCHIVE_PATH_GIT_DIR",
    ]);
    expect(await fs.readdir(fx.root)).toEqual(before);
    const text = await runCli(["candidate", "check", archive], { env });
    expect(text.stdout).toMatch(/^refused \(2 reasons\)/);
    expect(text.stdout).toContain("ARCHIVE_PATH_TRAVERSAL");
  });

  it("check honours operator limits from a file", async () => {
    const archive = await fx.writeSnapshot(BASE_TREE);
    const limitsFile = `${fx.root}/limits.json`;
    await fs.writeFile(limitsFile, JSON.stringify({ symlinkPolicy: "refuse" }));
    const result = await runCli(["candidate", "check", archive, "--limits", limitsFile, "--json"], { env });
    expect(result.code).toBe(1);
    expect(JSON.parse(result.stdout).reasons[0].code).toBe("ARCHIVE_SYMLINK_REFUSED");
  });

  it("rehydrate re-proves a candidate and fails closed once its artifact is gone", async () => {
    const task = await fx.createTask();
    const manifest = await importCandidate({
      db,
      task,
      archivePath: await fx.writeSnapshot({ ...BASE_TREE, "src/app.ts": "export const answer = 42;\n" }),
      declaredChangedPaths: ["src/app.ts"],
      mirrorPath: fx.mirrorPath,
      candidateRepoPath: fx.candidateRepoPath,
      artifactStore: fx.artifactStore,
      limits: DEFAULT_ARCHIVE_LIMITS,
      workDir: fx.workDir,
    });
    const ok = await runCli(["candidate", "rehydrate", manifest.candidateId, "--json"], { env });
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({
      verdict: "reproduced",
      headSha: manifest.headSha,
      rebuiltHeadSha: manifest.headSha,
    });

    await fs.rm(`${fx.artifactRoot}/sha256/${manifest.archiveDigest.slice(0, 2)}/${manifest.archiveDigest}`);
    const failed = await runCli(["candidate", "rehydrate", manifest.candidateId, "--json"], { env });
    expect(failed.code).toBe(1);
    expect(JSON.parse(failed.stdout).error.code).toBe("ARTIFACT_CORRUPT");
    const audit = await db.auditLog.findMany({
      where: { targetType: "candidate", targetId: manifest.candidateId },
      orderBy: { id: "asc" },
    });
    expect(audit.map((a) => (a.detail as { outcome: string }).outcome)).toEqual(["reproduced", "ARTIFACT_CORRUPT"]);
  });
});
