import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initBareRepository } from "../git/git-bare-repository";
import { commitWorktree } from "../git/git-commit";
import { fetchCommit } from "../git/git-plumbing";
import { DEFAULT_ARCHIVE_LIMITS } from "./archive-limits";
import { writeCandidateCommit, type TWriteCandidateCommitOptions } from "./candidate-commit";
import { CANDIDATE_AUTHOR, CANDIDATE_COMMITTER } from "./candidate-commit-metadata";
import { acceptedOrThrow } from "./import-candidate";
import { BASE_TREE, snapshotArchive, type TSnapshot } from "./testing/candidate-fixtures";
import { validateArchive } from "./validate-archive";

// The recipe's inputs, and nothing else, determine the candidate commit: the same inputs give the
// same SHA in any repository, each input moves it, and the commit object is exactly the one the
// recipe describes. Import and rehydration both call writeCandidateCommit, so the rehydration
// proof rests on this (rehydrate-candidate.integration.test.ts checks the pair end to end).

let root: string;
let mirrorPath: string;
let baseSha: string;
let repoCounter = 0;

/** Plain git, outside our runner: an independent reading of what the recipe wrote. */
function git(gitDir: string, args: string[]): string {
  return execFileSync("git", [`--git-dir=${gitDir}`, ...args]).toString();
}

async function writeFiles(dir: string, snapshot: TSnapshot): Promise<void> {
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

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "candidate-commit-"));
  const source = path.join(root, "source");
  await fs.mkdir(source);
  execFileSync("git", ["init", "--quiet", "--initial-branch=main", source]);
  await writeFiles(source, BASE_TREE);
  baseSha = await commitWorktree({
    worktreePath: source,
    metadata: {
      authorName: "Teacher",
      authorEmail: "teacher@example.invalid",
      committerName: "Teacher",
      committerEmail: "teacher@example.invalid",
      epochSeconds: 1_690_000_000,
      message: "base\n",
    },
  });
  mirrorPath = path.join(root, "mirror.git");
  await initBareRepository({ repoPath: mirrorPath });
  await fetchCommit({ gitDir: mirrorPath, sourceRepoPath: source, sha: baseSha });
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

const IDENTITY = {
  taskId: "0b7f6f7e-58a4-4d7e-9f43-2f1c4b0e8a11",
  issueNumber: 7,
  repository: "school/demo",
  taskCreatedAt: new Date("2026-05-06T07:08:09Z"),
} as const;

const SNAPSHOT: TSnapshot = {
  ...BASE_TREE,
  "src/app.ts": "export const answer = 42;\n",
  "src/extra.bin": { content: Buffer.from([0, 1, 2, 255, 254, 0]), mode: 0o755 },
};

/** Validates the snapshot (as import and rehydration do) and writes it with the recipe into a fresh repository. */
async function writeInFreshRepository(
  overrides: { identity?: Partial<TWriteCandidateCommitOptions["identity"]>; snapshot?: TSnapshot } = {},
): Promise<{ gitDir: string; headSha: string }> {
  const staging = await fs.mkdtemp(path.join(root, "staging-"));
  const archivePath = path.join(staging, "archive.tar");
  await fs.writeFile(archivePath, snapshotArchive(overrides.snapshot ?? SNAPSHOT));
  const spoolPath = path.join(staging, "content.spool");
  const verdict = acceptedOrThrow(await validateArchive({ archivePath, limits: DEFAULT_ARCHIVE_LIMITS, spoolPath }));
  const gitDir = path.join(root, `repo-${repoCounter++}.git`);
  const headSha = await writeCandidateCommit({
    gitDir,
    mirrorPath,
    baseSha,
    identity: { ...IDENTITY, ...overrides.identity },
    entries: verdict.entries,
    spoolPath,
  });
  return { gitDir, headSha };
}

describe("writeCandidateCommit: the one candidate commit recipe", () => {
  it("gives the same SHA for the same inputs in different repositories, and leaves no ref behind", async () => {
    const first = await writeInFreshRepository();
    const second = await writeInFreshRepository();
    expect(second.headSha).toBe(first.headSha);
    expect(git(first.gitDir, ["for-each-ref", "--format=%(refname)"]).trim()).toBe("");
  });

  it("writes exactly the commit the recipe describes: parent, tree, fixed identities, task date, message", async () => {
    const { gitDir, headSha } = await writeInFreshRepository();
    const tree = git(gitDir, ["rev-parse", `${headSha}^{tree}`]).trim();
    const epoch = Math.floor(IDENTITY.taskCreatedAt.getTime() / 1000);
    expect(git(gitDir, ["cat-file", "commit", headSha])).toBe(
      [
        `tree ${tree}`,
        `parent ${baseSha}`,
        `author ${CANDIDATE_AUTHOR.name} <${CANDIDATE_AUTHOR.email}> ${epoch} +0000`,
        `committer ${CANDIDATE_COMMITTER.name} <${CANDIDATE_COMMITTER.email}> ${epoch} +0000`,
        "",
        `School-Core candidate for ${IDENTITY.repository}#${IDENTITY.issueNumber}`,
        "",
        `Task: ${IDENTITY.taskId}`,
        "",
      ].join("\n"),
    );
    expect(git(gitDir, ["ls-tree", "-r", "--format=%(objectmode) %(path)", headSha]).trim().split("\n")).toEqual([
      "100644 README.md",
      "100644 docs/old.txt",
      "120000 latest",
      "100755 scripts/run.sh",
      "100644 src/app.ts",
      "100755 src/extra.bin",
    ]);
  });

  it("moves the SHA with every input of the recipe, and not with a sub-second change of the task's date", async () => {
    const { headSha } = await writeInFreshRepository();
    const variants = {
      taskId: await writeInFreshRepository({ identity: { taskId: "0b7f6f7e-58a4-4d7e-9f43-2f1c4b0e8a12" } }),
      issueNumber: await writeInFreshRepository({ identity: { issueNumber: 8 } }),
      repository: await writeInFreshRepository({ identity: { repository: "school/other" } }),
      taskCreatedAt: await writeInFreshRepository({ identity: { taskCreatedAt: new Date("2026-05-06T07:08:10Z") } }),
      round: await writeInFreshRepository({ identity: { round: 2 } }),
      content: await writeInFreshRepository({ snapshot: { ...SNAPSHOT, "src/app.ts": "export const answer = 43;\n" } }),
      mode: await writeInFreshRepository({
        snapshot: { ...SNAPSHOT, "src/extra.bin": { content: Buffer.from([0, 1, 2, 255, 254, 0]) } },
      }),
    };
    const shas = Object.values(variants).map((v) => v.headSha);
    expect(new Set([headSha, ...shas]).size).toBe(shas.length + 1);
    // Round 1 is the commit a candidate always had: naming it changes nothing.
    expect((await writeInFreshRepository({ identity: { round: 1 } })).headSha).toBe(headSha);
    expect(
      (await writeInFreshRepository({ identity: { taskCreatedAt: new Date("2026-05-06T07:08:09.900Z") } })).headSha,
    ).toBe(headSha);
  });
});
