import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { DEFAULT_PROTECTED_PATH_PATTERNS, DEFAULT_PROTECTED_PATHS_SETTING } from "../contract/protected-paths-setting";
import { writeSetting } from "../settings/operator-settings";
import { createTestDatabase } from "../testing/test-database";
import { DEFAULT_ARCHIVE_LIMITS } from "./archive-limits";
import { HOSTILE_CORPUS } from "./testing/archive-corpus";
import { importCandidate, type TImportCandidateOptions } from "./import-candidate";
import {
  BASE_TREE,
  createImportFixture,
  listTree,
  type TImportFixture,
  type TSnapshot,
} from "./testing/candidate-fixtures";

let db: Db;
let fx: TImportFixture;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  fx = await createImportFixture(db);
});
afterAll(async () => {
  await fx?.cleanup();
});

const sha256 = (data: string | Buffer) => createHash("sha256").update(data).digest("hex");

/** Plain git, outside our runner: an independent reading of what import wrote. */
function git(gitDir: string, args: string[]): Buffer {
  return execFileSync("git", [`--git-dir=${gitDir}`, ...args], { maxBuffer: 256 * 1024 * 1024 });
}

const CHANGED_TREE: TSnapshot = {
  ...Object.fromEntries(Object.entries(BASE_TREE).filter(([p]) => p !== "docs/old.txt" && p !== "latest")),
  "README.md": "# Demo\n\nNow with an answer.\n",
  "src/app.ts": "export const answer = 42;\n",
  "scripts/run.sh": { content: "#!/bin/sh\necho run\n", mode: 0o644 },
  "src/new.ts": "export const added = true;\n",
  latest: "was a symlink, now a file\n",
  // A hostile tree's own git configuration files must not change what is committed.
  ".gitignore": "*.log\n",
  ".gitattributes": "* text eol=crlf\n*.txt ident filter=evil\n",
  "debug.log": "ignored by .gitignore, committed anyway\n",
  "notes.txt": "$Id$\r\nCRLF stays CRLF\r\n",
};
const CHANGED_PATHS = [
  ".gitattributes",
  ".gitignore",
  "README.md",
  "debug.log",
  "docs/old.txt",
  "latest",
  "notes.txt",
  "scripts/run.sh",
  "src/app.ts",
  "src/new.ts",
];

async function importWith(
  task: TImportCandidateOptions["task"],
  archivePath: string,
  overrides: Partial<TImportCandidateOptions> = {},
) {
  return importCandidate({
    db,
    task,
    archivePath,
    declaredChangedPaths: CHANGED_PATHS,
    mirrorPath: fx.mirrorPath,
    candidateRepoPath: fx.candidateRepoPath,
    artifactStore: fx.artifactStore,
    limits: DEFAULT_ARCHIVE_LIMITS,
    workDir: fx.workDir,
    ...overrides,
  });
}

async function expectAppError(promise: Promise<unknown>, code: string): Promise<AppError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error, `expected ${code}`).toBeInstanceOf(AppError);
  expect((error as AppError).code, (error as AppError).message).toBe(code);
  return error as AppError;
}

describe("importCandidate: happy path", () => {
  it("imports the snapshot and records a manifest that matches git", async () => {
    const createdAt = new Date("2026-03-04T05:06:07.890Z");
    const task = await fx.createTask({ createdAt });
    const archivePath = await fx.writeSnapshot(CHANGED_TREE);
    const archiveBytes = await fs.readFile(archivePath);
    const manifest = await importWith(task, archivePath);

    const branchRef = `refs/heads/school/${task.id}`;
    const head = git(fx.candidateRepoPath, ["rev-parse", branchRef]).toString().trim();
    expect(manifest.headSha).toBe(head);
    expect(manifest.branch).toBe(`school/${task.id}`);
    expect(manifest).toMatchObject({
      v: 1,
      taskId: task.id,
      issueNumber: 7,
      repository: fx.repository,
      baseRef: "main",
      baseSha: fx.baseSha,
    });
    expect(manifest.candidateId).toMatch(/^cand_[0-9a-f]{32}$/);
    expect(
      git(fx.candidateRepoPath, ["rev-parse", `${head}^`])
        .toString()
        .trim(),
    ).toBe(fx.baseSha);

    // Fixed metadata: identities, dates from the task (whole seconds), message from the task.
    const meta = git(fx.candidateRepoPath, ["log", "-1", "--format=%an|%ae|%at|%cn|%ce|%ct|%G?", head])
      .toString()
      .trim();
    expect(meta).toBe(
      `School-Core student agent|student-agent@school-core.invalid|${Math.floor(createdAt.getTime() / 1000)}|School-Core|candidates@school-core.invalid|${Math.floor(createdAt.getTime() / 1000)}|N`,
    );
    expect(git(fx.candidateRepoPath, ["log", "-1", "--format=%B", head]).toString()).toContain(`Task: ${task.id}`);

    // Changed-file set with statuses and modes, as plain git sees it.
    const rawDiff = git(fx.candidateRepoPath, [
      "diff-tree",
      "-r",
      "--no-renames",
      "--raw",
      "--full-index",
      fx.baseSha,
      head,
    ])
      .toString()
      .trim()
      .split("\n");
    const fromGit = rawDiff.map((line) => {
      const [meta, file] = line.split("\t");
      const [oldMode, newMode, , , status] = meta!.slice(1).split(" ");
      return `${status} ${file} ${oldMode}->${newMode}`;
    });
    expect(
      manifest.changedFiles.map((f) => `${f.status} ${f.path} ${f.oldMode ?? "000000"}->${f.newMode ?? "000000"}`),
    ).toEqual(fromGit);
    expect(manifest.changedFiles.find((f) => f.path === "latest")?.status).toBe("T");
    expect(manifest.changedFiles.find((f) => f.path === "scripts/run.sh")).toMatchObject({
      status: "M",
      oldMode: "100755",
      newMode: "100644",
    });
    expect(manifest.changedFiles.find((f) => f.path === "docs/old.txt")).toMatchObject({
      status: "D",
      newMode: null,
      newBlob: null,
    });

    // Diff digest over git's canonical binary diff.
    expect(manifest.diffDigest).toBe(
      sha256(
        git(fx.candidateRepoPath, ["diff", "--binary", "--full-index", "--no-color", "--no-renames", fx.baseSha, head]),
      ),
    );
    expect(manifest.archiveDigest).toBe(sha256(archiveBytes));

    // Every file of the snapshot, byte-exact in git (no ignore rules, no eol/ident/filter rewriting).
    expect(manifest.fileDigests.map((f) => f.path)).toEqual(
      git(fx.candidateRepoPath, ["ls-tree", "-r", "--name-only", head]).toString().trim().split("\n"),
    );
    for (const file of manifest.fileDigests) {
      expect(sha256(git(fx.candidateRepoPath, ["cat-file", "blob", `${head}:${file.path}`])), file.path).toBe(
        file.sha256,
      );
    }
    expect(git(fx.candidateRepoPath, ["cat-file", "blob", `${head}:notes.txt`]).toString()).toBe(
      "$Id$\r\nCRLF stays CRLF\r\n",
    );

    // Durable state: the row equals the manifest; the artifact is stored and verifiable.
    const row = await db.candidate.findUniqueOrThrow({ where: { id: manifest.candidateId } });
    expect(row).toMatchObject({
      taskId: task.id,
      headSha: head,
      diffDigest: manifest.diffDigest,
      archiveDigest: manifest.archiveDigest,
    });
    expect(row.changedFiles).toEqual(manifest.changedFiles);
    expect(JSON.stringify(row)).not.toContain("Now with an answer");
    const artifact = await db.artifact.findUniqueOrThrow({ where: { digest: manifest.archiveDigest } });
    expect(artifact).toMatchObject({ kind: "candidate-archive", sizeBytes: BigInt(archiveBytes.length) });
    expect(await fx.artifactStore.verify(manifest.archiveDigest)).toBe(true);
    expect(await fs.readdir(fx.workDir)).toEqual([]);

    // A retried import of the same archive is the same candidate.
    const again = await importWith(task, archivePath);
    expect(again).toEqual(manifest);
    expect(await db.candidate.count({ where: { taskId: task.id } })).toBe(1);

    // A different snapshot for the same task is refused; the branch does not move.
    const other = await fx.writeSnapshot({ ...CHANGED_TREE, "src/new.ts": "different\n" });
    await expectAppError(importWith(task, other), "STATE_CONFLICT");
    expect(git(fx.candidateRepoPath, ["rev-parse", branchRef]).toString().trim()).toBe(head);
  });

  it("keeps every byte of files that straddle the read, spool and write buffers (each reused in place)", async () => {
    const task = await fx.createTask();
    const MiB = 1024 * 1024;
    // Sizes around the 256 KiB archive reads and the 1 MiB spool reads and fast-import writes,
    // with distinct bytes at every offset, so a view reused too early shows up as wrong content.
    const sizes = [1, 256 * 1024 - 1, 256 * 1024 + 7, MiB - 1, MiB, MiB + 1, 3 * MiB + 513, 5, 0, 2 * MiB - 3];
    const snapshot: TSnapshot = { ...BASE_TREE };
    sizes.forEach((size, i) => {
      const content = Buffer.alloc(size);
      for (let j = 0; j < size; j++) content[j] = (j * 31 + i * 7 + (j >> 10)) & 0xff;
      snapshot[`big/file-${i}.bin`] = { content };
    });
    const archivePath = await fx.writeSnapshot(snapshot, "straddle.tar");
    const manifest = await importWith(task, archivePath, {
      declaredChangedPaths: sizes.map((_, i) => `big/file-${i}.bin`),
    });
    for (const [file, spec] of Object.entries(snapshot)) {
      const expected =
        typeof spec === "string" ? Buffer.from(spec) : "content" in spec ? Buffer.from(spec.content) : null;
      if (!expected) continue;
      expect(sha256(git(fx.candidateRepoPath, ["cat-file", "blob", `${manifest.headSha}:${file}`])), file).toBe(
        sha256(expected),
      );
    }
  });

  it("has immutable Candidate rows (the database refuses update and delete)", async () => {
    const task = await fx.createTask();
    const manifest = await importWith(task, await fx.writeSnapshot(CHANGED_TREE));
    await expect(
      db.candidate.update({ where: { id: manifest.candidateId }, data: { headSha: "0".repeat(40) } }),
    ).rejects.toThrow(/immutable/);
    await expect(db.candidate.delete({ where: { id: manifest.candidateId } })).rejects.toThrow(/immutable/);
    expect((await db.candidate.findUniqueOrThrow({ where: { id: manifest.candidateId } })).headSha).toBe(
      manifest.headSha,
    );
  });

  it("accepts a gzip-compressed archive as the same tree", async () => {
    const task = await fx.createTask();
    const plain = await fx.writeSnapshot(CHANGED_TREE);
    const gz = path.join(path.dirname(plain), "candidate.tar.gz");
    execFileSync("sh", ["-c", `gzip -c '${plain}' > '${gz}'`]);
    const manifest = await importWith(task, gz);
    expect(manifest.archiveDigest).toBe(sha256(await fs.readFile(gz)));
    expect(manifest.changedFiles.map((f) => f.path)).toEqual(CHANGED_PATHS);
  });
});

describe("importCandidate: disagreements fail closed", () => {
  async function expectNothingRecorded(taskId: string): Promise<void> {
    expect(await db.candidate.count({ where: { taskId } })).toBe(0);
    const branches = git(fx.candidateRepoPath, ["for-each-ref", "--format=%(refname)", `refs/heads/school/${taskId}`])
      .toString()
      .trim();
    expect(branches).toBe("");
    expect(await fs.readdir(fx.workDir)).toEqual([]);
  }

  it("refuses declared paths that differ from the observed change set", async () => {
    for (const declared of [
      CHANGED_PATHS.slice(1),
      [...CHANGED_PATHS, "src/not-changed.ts"],
      [...CHANGED_PATHS, CHANGED_PATHS[0]!],
      [],
    ]) {
      const task = await fx.createTask();
      const error = await expectAppError(
        importWith(task, await fx.writeSnapshot(CHANGED_TREE), { declaredChangedPaths: declared }),
        "CANDIDATE_MISMATCH",
      );
      expect(error.message).toMatch(/declared changed paths/);
      await expectNothingRecorded(task.id);
    }
  });

  it("refuses an archive whose digest differs from the declared one", async () => {
    const task = await fx.createTask();
    await expectAppError(
      importWith(task, await fx.writeSnapshot(CHANGED_TREE), { declaredArchiveDigest: "a".repeat(64) }),
      "CANDIDATE_MISMATCH",
    );
    await expectNothingRecorded(task.id);
  });

  it("refuses a task identity that disagrees with the task record", async () => {
    const task = await fx.createTask();
    await expectAppError(
      importWith({ ...task, issueNumber: 8 }, await fx.writeSnapshot(CHANGED_TREE)),
      "CANDIDATE_MISMATCH",
    );
    await expectAppError(
      importWith({ ...task, repository: "other/repo" }, await fx.writeSnapshot(CHANGED_TREE)),
      "CANDIDATE_MISMATCH",
    );
    await expectNothingRecorded(task.id);
  });

  it("refuses a snapshot identical to the base", async () => {
    const task = await fx.createTask();
    await expectAppError(
      importWith(task, await fx.writeSnapshot(BASE_TREE), { declaredChangedPaths: [] }),
      "CANDIDATE_EMPTY",
    );
    await expectNothingRecorded(task.id);
  });

  it("refuses a candidate that changes CI configuration, naming the paths, unless the operator allowed them for this repository", async () => {
    const hostile: TSnapshot = {
      ...BASE_TREE,
      ".github/workflows/steal.yml": "on: push\njobs: {}\n",
      ".GitModules": "[submodule]\n",
      "src/app.ts": "export const answer = 42;\n",
    };
    const declared = [".GitModules", ".github/workflows/steal.yml", "src/app.ts"];
    const task = await fx.createTask();
    const error = await expectAppError(
      importWith(task, await fx.writeSnapshot(hostile), { declaredChangedPaths: declared }),
      "CANDIDATE_PROTECTED_PATH",
    );
    expect(error.message).toContain(".github/workflows/steal.yml");
    expect(error.message).toContain(".GitModules");
    expect(error.message).not.toContain("src/app.ts");
    await expectNothingRecorded(task.id);

    // Allowed for this repository (and only the workflows): the workflow passes, the submodule file still does not.
    await writeSetting(
      { db },
      {
        key: "publish.protectedPaths",
        value: {
          defaultPatterns: [...DEFAULT_PROTECTED_PATH_PATTERNS],
          repositories: { [fx.repository]: { allowed: [".github/workflows/**"] } },
        },
        actor: null,
        reason: "test setup",
      },
    );
    try {
      const second = await fx.createTask();
      const stillRefused = await expectAppError(
        importWith(second, await fx.writeSnapshot(hostile), { declaredChangedPaths: declared }),
        "CANDIDATE_PROTECTED_PATH",
      );
      expect(stillRefused.message).not.toContain("steal.yml");
      const { ".GitModules": _dropped, ...workflowOnly } = hostile;
      const third = await fx.createTask();
      const manifest = await importWith(third, await fx.writeSnapshot(workflowOnly), {
        declaredChangedPaths: [".github/workflows/steal.yml", "src/app.ts"],
      });
      expect(manifest.changedFiles.map((f) => f.path)).toContain(".github/workflows/steal.yml");
    } finally {
      await writeSetting(
        { db },
        {
          key: "publish.protectedPaths",
          value: DEFAULT_PROTECTED_PATHS_SETTING,
          actor: null,
          reason: "test setup",
        },
      );
    }
  });

  it("refuses a base the mirror does not have", async () => {
    const task = await fx.createTask({ baseSha: "1".repeat(40) });
    await expectAppError(importWith(task, await fx.writeSnapshot(CHANGED_TREE)), "BASE_UNAVAILABLE");
    expect(await db.candidate.count({ where: { taskId: task.id } })).toBe(0);
  });
});

describe("importCandidate: submodules of the base", () => {
  it("keeps the base's gitlinks and refuses archive content inside one", async () => {
    const local = await createImportFixture(db, { gitlinks: { "vendor/lib": "d".repeat(40) } });
    try {
      const task = await local.createTask();
      const snapshot: TSnapshot = { ...BASE_TREE, "src/app.ts": "export const answer = 42;\n" };
      const common = {
        db,
        mirrorPath: local.mirrorPath,
        candidateRepoPath: local.candidateRepoPath,
        artifactStore: local.artifactStore,
        limits: DEFAULT_ARCHIVE_LIMITS,
        workDir: local.workDir,
      };
      const manifest = await importCandidate({
        ...common,
        task,
        archivePath: await local.writeSnapshot(snapshot),
        declaredChangedPaths: ["src/app.ts"],
      });
      expect(git(local.candidateRepoPath, ["ls-tree", manifest.headSha, "vendor/lib"]).toString()).toContain(
        `160000 commit ${"d".repeat(40)}`,
      );

      const task2 = await local.createTask();
      const error = await expectAppError(
        importCandidate({
          ...common,
          task: task2,
          archivePath: await local.writeSnapshot({ ...snapshot, "vendor/lib/evil.txt": "x" }),
          declaredChangedPaths: ["src/app.ts", "vendor/lib/evil.txt"],
        }),
        "ARCHIVE_REFUSED",
      );
      expect(JSON.stringify(error.details)).toContain("ARCHIVE_PATH_CONFLICT");
    } finally {
      await local.cleanup();
    }
  });
});

describe("importCandidate: hostile corpus", () => {
  it.each(HOSTILE_CORPUS.map((c) => [c.name, c] as const))(
    "refuses before writing anything: %s",
    async (_name, corpusCase) => {
      const local = await createImportFixture(db);
      try {
        const task = await local.createTask();
        const archivePath = await local.writeBytes(corpusCase.bytes(), "hostile.tar");
        // Everything under the fixture root, and the directories around it, before the import.
        const before = await listTree(local.root);
        // Where a "../escaped…" entry would land if anything extracted by path: beside the work
        // directory, beside the fixture root, in the process's cwd, at the filesystem root.
        const around = [local.root, path.dirname(local.root), process.cwd(), "/", "/etc/cron.d"];
        const escapedNear = async () =>
          (await Promise.all(around.map((dir) => fs.readdir(dir).catch(() => [] as string[]))))
            .flat()
            .filter((n) => /escaped|^evil/.test(n));
        const aroundBefore = await escapedNear();
        const error = await expectAppError(
          importCandidate({
            db,
            task,
            archivePath,
            declaredChangedPaths: ["ok.txt"],
            mirrorPath: local.mirrorPath,
            candidateRepoPath: local.candidateRepoPath,
            artifactStore: local.artifactStore,
            limits: { ...DEFAULT_ARCHIVE_LIMITS, ...corpusCase.limits },
            workDir: local.workDir,
          }),
          "ARCHIVE_REFUSED",
        );
        expect((error.details?.reasons as { code: string }[]).map((r) => r.code)).toContain(corpusCase.code);
        // Nothing written outside the (now removed) staging directory: the work directory is
        // empty, no candidate repository, no stored artifact, nothing "escaped" anywhere near.
        expect(await listTree(local.root)).toEqual([...before, "work/"].sort());
        expect(
          await fs.stat(local.candidateRepoPath).then(
            () => true,
            () => false,
          ),
        ).toBe(false);
        expect(await escapedNear()).toEqual(aroundBefore);
        expect(await db.candidate.count({ where: { taskId: task.id } })).toBe(0);
        expect(await db.artifact.count()).toBe(await db.artifact.count({ where: { candidates: { some: {} } } }));
      } finally {
        await local.cleanup();
      }
    },
  );
});
