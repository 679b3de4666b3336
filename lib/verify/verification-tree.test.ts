import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitWorktree } from "../git/git-commit";
import { runGit } from "../git/run-git";
import { makeTempRoot, makeWorkRepo, TEST_COMMIT_METADATA } from "../git/testing/git-test-fixture";
import { writeVerificationArchive } from "./verification-tree";

let root: string;
let repo: string;
let baseSha: string;
let headSha: string;

async function write(files: Record<string, string | null>) {
  for (const [name, content] of Object.entries(files)) {
    const file = path.join(repo, name);
    if (content === null) await fs.rm(file);
    else {
      await fs.mkdir(path.dirname(file), { recursive: true });
      await fs.writeFile(file, content);
    }
  }
  return commitWorktree({ worktreePath: repo, metadata: TEST_COMMIT_METADATA });
}

beforeAll(async () => {
  root = await makeTempRoot("verification-tree-");
  repo = await makeWorkRepo(root, "work");
  baseSha = await write({
    "tests/a.test.js": "base a\n",
    "tests/sub/b.js": "base b\n",
    "spec/c.js": "base c\n",
    "src/x.js": "base x\n",
  });
  // the candidate rewrites, adds and deletes under both protected paths, and works outside them
  headSha = await write({
    "tests/a.test.js": "weakened a\n",
    "tests/new.js": "student's own\n",
    "tests/sub/b.js": null,
    "spec/d.js": "student's spec\n",
    "src/x.js": "student x\n",
    "tests-extra/z.js": "outside the protected path\n",
  });
});
afterAll(() => fs.rm(root, { recursive: true, force: true }));

async function treeOf(treeSha: string): Promise<Record<string, string>> {
  const listing = (await runGit({ cwd: repo, args: ["ls-tree", "-r", "--name-only", "-z", treeSha] })).stdout;
  const names = listing.toString("utf8").split("\0").filter(Boolean);
  const files: Record<string, string> = {};
  for (const name of names)
    files[name] = (await runGit({ cwd: repo, args: ["cat-file", "blob", `${treeSha}:${name}`] })).stdout.toString();
  return files;
}

describe("the verification tree", () => {
  it("is the head's tree with every protected path exactly as the base has it", async () => {
    const { treeSha } = await writeVerificationArchive({
      gitDir: path.join(repo, ".git"),
      baseSha,
      headSha,
      protectedPaths: ["tests", "spec"],
      outputPath: path.join(root, "verify.tar"),
    });
    expect(await treeOf(treeSha)).toEqual({
      "tests/a.test.js": "base a\n",
      "tests/sub/b.js": "base b\n",
      "spec/c.js": "base c\n",
      "src/x.js": "student x\n",
      "tests-extra/z.js": "outside the protected path\n",
    });
    expect((await fs.stat(path.join(root, "verify.tar"))).size).toBeGreaterThan(0);
  });

  it("is the head's tree when nothing is protected", async () => {
    const { treeSha } = await writeVerificationArchive({
      gitDir: path.join(repo, ".git"),
      baseSha,
      headSha,
      protectedPaths: [],
      outputPath: path.join(root, "plain.tar"),
    });
    expect(treeSha).toBe(
      (await runGit({ cwd: repo, args: ["rev-parse", `${headSha}^{tree}`] })).stdout.toString().trim(),
    );
  });
});
