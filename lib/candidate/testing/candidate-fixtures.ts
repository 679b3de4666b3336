/**
 * Test support for import and rehydration: a real target repository with a base commit, the
 * control plane's bare mirror of it, Task rows in a real database, a filesystem artifact store,
 * and snapshot archives built from a file map. Not used by production code.
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { createFsArtifactStore, defaultArtifactRoot } from "../../artifacts/fs-artifact-store";
import type { ArtifactStore } from "../../artifacts/artifact-store";
import type { Db } from "../../db/client";
import { initBareRepository } from "../../git/git-bare-repository";
import { commitEnv, commitWorktree } from "../../git/git-commit";
import { fetchCommit, updateRef } from "../../git/git-plumbing";
import { runGit } from "../../git/run-git";
import { mirrorPathFor } from "../../repos/mirror";
import { candidateRepoPathFor } from "../candidate-git";
import { tarArchive, tarFile, tarSymlink } from "./tar-builder";

export type TSnapshotFile = string | { content: string | Buffer; mode?: number } | { symlink: string };
export type TSnapshot = Record<string, TSnapshotFile>;

export const BASE_TREE: TSnapshot = {
  "README.md": "# Demo\n",
  "src/app.ts": "export const answer = 41;\n",
  "scripts/run.sh": { content: "#!/bin/sh\necho run\n", mode: 0o755 },
  "docs/old.txt": "old docs\n",
  latest: { symlink: "README.md" },
};

export type TImportFixture = {
  root: string;
  dataDir: string;
  db: Db;
  sourcePath: string;
  mirrorPath: string;
  candidateRepoPath: string;
  workDir: string;
  artifactRoot: string;
  artifactStore: ArtifactStore;
  baseSha: string;
  repository: string;
  createTask(overrides?: {
    createdAt?: Date;
    baseSha?: string;
    issueNumber?: number;
  }): Promise<{ id: string; issueNumber: number; repository: string; baseRef: string; baseSha: string }>;
  writeSnapshot(snapshot: TSnapshot, name?: string): Promise<string>;
  writeBytes(bytes: Buffer, name?: string): Promise<string>;
  cleanup(): Promise<void>;
};

async function writeTree(dir: string, snapshot: TSnapshot): Promise<void> {
  for (const [file, spec] of Object.entries(snapshot)) {
    const target = path.join(dir, file);
    await fs.mkdir(path.dirname(target), { recursive: true });
    if (typeof spec === "string") await fs.writeFile(target, spec);
    else if ("symlink" in spec) await fs.symlink(spec.symlink, target);
    else {
      await fs.writeFile(target, spec.content);
      await fs.chmod(target, spec.mode ?? 0o644);
    }
  }
}

export function snapshotArchive(snapshot: TSnapshot): Buffer {
  return tarArchive(
    ...Object.entries(snapshot).map(([file, spec]) => {
      if (typeof spec === "string") return tarFile(file, spec);
      if ("symlink" in spec) return tarSymlink(file, spec.symlink);
      return tarFile(file, spec.content, spec.mode ?? 0o644);
    }),
  );
}

let repoCounter = 0;

export async function createImportFixture(
  db: Db,
  options: { baseTree?: TSnapshot; gitlinks?: Record<string, string> } = {},
): Promise<TImportFixture> {
  const root = await fs.mkdtemp(path.join(os.tmpdir(), "candidate-fixture-"));
  const sourcePath = path.join(root, "source");
  await fs.mkdir(sourcePath);
  await runGit({ args: ["init", "--quiet", "--initial-branch=main", "--", sourcePath] });
  await writeTree(sourcePath, options.baseTree ?? BASE_TREE);
  const metadata = {
    authorName: "Teacher",
    authorEmail: "teacher@example.invalid",
    committerName: "Teacher",
    committerEmail: "teacher@example.invalid",
    epochSeconds: 1_690_000_000,
    message: "base\n",
  };
  let baseSha: string;
  if (options.gitlinks) {
    // A submodule link has no worktree content, so it is staged by hand (git add would drop it).
    await runGit({ cwd: sourcePath, args: ["add", "--all"] });
    for (const [linkPath, sha] of Object.entries(options.gitlinks)) {
      await runGit({ cwd: sourcePath, args: ["update-index", "--add", "--cacheinfo", `160000,${sha},${linkPath}`] });
    }
    await runGit({
      cwd: sourcePath,
      env: commitEnv(metadata),
      args: ["commit", "--quiet", "--no-verify", "--file=-"],
      input: metadata.message,
    });
    baseSha = (await runGit({ cwd: sourcePath, args: ["rev-parse", "HEAD"] })).stdout.toString().trim();
  } else {
    baseSha = await commitWorktree({ worktreePath: sourcePath, metadata });
  }
  // The deployment's own layout under DATA_DIR, so CLI and page code paths find everything.
  const dataDir = path.join(root, "data");
  const repository = `school/demo-${process.pid}-${repoCounter++}`;
  const mirrorPath = mirrorPathFor(dataDir, repository);
  await initBareRepository({ repoPath: mirrorPath });
  await fetchCommit({ gitDir: mirrorPath, sourceRepoPath: sourcePath, sha: baseSha });
  await updateRef({ gitDir: mirrorPath, ref: "refs/heads/main", newSha: baseSha });

  const target = await db.targetRepository.create({ data: { name: repository, cloneUrl: `file://${mirrorPath}` } });
  const artifactRoot = defaultArtifactRoot(dataDir);
  const workDir = path.join(root, "work");
  let archiveCounter = 0;

  const fixture: TImportFixture = {
    root,
    db,
    sourcePath,
    mirrorPath,
    dataDir,
    candidateRepoPath: candidateRepoPathFor(dataDir, repository),
    workDir,
    artifactRoot,
    artifactStore: createFsArtifactStore({ rootDir: artifactRoot }),
    baseSha,
    repository,
    async createTask(overrides = {}) {
      const task = await db.task.create({
        data: {
          id: randomUUID(),
          repositoryId: target.id,
          issueNumber: overrides.issueNumber ?? 7,
          issueTitle: "Make the answer right",
          prompt: "untrusted prompt",
          baseRef: "main",
          baseSha: overrides.baseSha ?? baseSha,
          operationId: randomUUID(),
          limits: {},
          state: "collecting",
          ...(overrides.createdAt ? { createdAt: overrides.createdAt } : {}),
        },
      });
      return { id: task.id, issueNumber: task.issueNumber, repository, baseRef: task.baseRef, baseSha: task.baseSha };
    },
    async writeSnapshot(snapshot, name) {
      return fixture.writeBytes(snapshotArchive(snapshot), name);
    },
    async writeBytes(bytes, name) {
      const file = path.join(root, "incoming", name ?? `candidate-${archiveCounter++}.tar`);
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, bytes);
      return file;
    },
    async cleanup() {
      await fs.rm(root, { recursive: true, force: true });
    },
  };
  return fixture;
}

/** Every path under a directory with its size (directories end in "/"), for before/after comparisons. */
export async function listTree(dir: string): Promise<string[]> {
  const out: string[] = [];
  async function walk(current: string): Promise<void> {
    const entries = await fs.readdir(current, { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      const full = path.join(current, entry.name);
      if (entry.isDirectory()) {
        out.push(`${path.relative(dir, full)}/`);
        await walk(full);
      } else {
        const stat = await fs.lstat(full);
        out.push(`${path.relative(dir, full)} ${stat.size}`);
      }
    }
  }
  await walk(dir);
  return out.sort();
}
