/**
 * The plumbing helpers on real git: deterministic commits, fetch by SHA, revisions, raw and binary
 * diffs, tree listings, archives with neutral attributes, worktrees, and option-looking values
 * refused before git sees them.
 */
import { createHash } from "node:crypto";
import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { initBareRepository } from "./git-bare-repository";
import { commitWorktree } from "./git-commit";
import { diffTreeRaw, digestBinaryDiff } from "./git-diff";
import { addWorktree, archiveTree, fetchCommit, hasCommit, lsTree, removeWorktree, revParse } from "./git-plumbing";
import { runGit } from "./run-git";
import {
  expectGitFailure,
  makeTempRoot,
  makeWorkRepo,
  pathExists,
  TEST_COMMIT_METADATA,
} from "./testing/git-test-fixture";

let root: string;

beforeAll(async () => {
  root = await makeTempRoot("git-plumbing-test-");
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

describe("git helpers", () => {
  it("creates the folder holding a new bare repository (DATA_DIR/mirrors, DATA_DIR/candidates) owner-only", async () => {
    const dataDir = path.join(root, "fresh-data");
    await initBareRepository({ repoPath: path.join(dataDir, "mirrors", "owner__name.git") });
    expect((await fs.stat(path.join(dataDir, "mirrors"))).mode & 0o777).toBe(0o700);
  });

  it("commits deterministically, fetches by SHA, diffs, lists and archives", async () => {
    const work = await makeWorkRepo(root, "helpers-src");
    await fs.writeFile(path.join(work, "keep.txt"), "keep\n");
    await fs.writeFile(path.join(work, "change.txt"), "before\n");
    await fs.writeFile(path.join(work, "gone.txt"), "gone\n");
    const base = await commitWorktree({ worktreePath: work, metadata: TEST_COMMIT_METADATA });

    // Same tree, same metadata → same SHA in another repository.
    const twin = await makeWorkRepo(root, "helpers-twin");
    for (const f of ["keep.txt", "change.txt", "gone.txt"]) await fs.copyFile(path.join(work, f), path.join(twin, f));
    expect(await commitWorktree({ worktreePath: twin, metadata: TEST_COMMIT_METADATA })).toBe(base);

    await fs.writeFile(path.join(work, "change.txt"), "after\n");
    await fs.rm(path.join(work, "gone.txt"));
    await fs.writeFile(path.join(work, "new.sh"), "#!/bin/sh\n", { mode: 0o755 });
    await fs.writeFile(path.join(work, ".gitattributes"), "new.sh export-ignore\n");
    const head = await commitWorktree({
      worktreePath: work,
      metadata: { ...TEST_COMMIT_METADATA, message: "second\n" },
    });

    const bare = path.join(root, "helpers.git");
    await initBareRepository({ repoPath: bare });
    expect(await hasCommit({ gitDir: bare, sha: head })).toBe(false);
    await fetchCommit({ gitDir: bare, sourceRepoPath: work, sha: head });
    expect(await hasCommit({ gitDir: bare, sha: head })).toBe(true);
    expect(await hasCommit({ gitDir: bare, sha: base })).toBe(true);
    expect(await revParse({ gitDir: bare, rev: head, peelTo: "commit" })).toBe(head);
    expect(await revParse({ gitDir: bare, rev: "0000000000000000000000000000000000000001" })).toBeNull();

    const changes = await diffTreeRaw({ gitDir: bare, from: base, to: head });
    expect(changes.map((c) => `${c.status} ${c.path} ${c.oldMode}->${c.newMode}`).sort()).toEqual([
      "A .gitattributes 000000->100644",
      "A new.sh 000000->100755",
      "D gone.txt 100644->000000",
      "M change.txt 100644->100644",
    ]);

    const listing = await lsTree({ gitDir: bare, treeish: head });
    expect(listing.map((e) => `${e.mode} ${e.path}`).sort()).toEqual([
      "100644 .gitattributes",
      "100644 change.txt",
      "100644 keep.txt",
      "100755 new.sh",
    ]);

    // The digest is sha256 of exactly the bytes plain git prints for the same canonical diff.
    const plainDiff = execFileSync("git", [
      `--git-dir=${bare}`,
      "diff",
      "--binary",
      "--full-index",
      "--no-color",
      "--no-renames",
      "--src-prefix=a/",
      "--dst-prefix=b/",
      base,
      head,
    ]);
    expect(plainDiff.toString("utf8")).toContain("+after");
    expect(await digestBinaryDiff({ gitDir: bare, from: base, to: head })).toBe(
      createHash("sha256").update(plainDiff).digest("hex"),
    );
    // An unknown commit fails closed: no digest of an empty diff.
    await expect(
      digestBinaryDiff({ gitDir: bare, from: base, to: "0000000000000000000000000000000000000001" }),
    ).rejects.toMatchObject({
      code: "GIT_FAILED",
    });

    // The in-tree export-ignore is neutralised by the repository's info/attributes.
    const tarPath = path.join(root, "helpers.tar");
    await archiveTree({ gitDir: bare, treeish: head, outputPath: tarPath });
    const names = execFileSync("tar", ["-tf", tarPath], { encoding: "utf8" }).split("\n").filter(Boolean);
    expect(names).toContain("new.sh");
  });

  it("creates or re-opens a bare repository from many processes at once (two workers importing into one new repository)", async () => {
    for (const existing of [false, true]) {
      const repoPath = path.join(root, `concurrent-${existing ? "existing" : "new"}.git`);
      if (existing) await initBareRepository({ repoPath });
      // Each call spawns git; twelve at once is what several workers' imports do to one repository.
      const outcomes = await Promise.allSettled(Array.from({ length: 12 }, () => initBareRepository({ repoPath })));
      expect(outcomes.filter((o) => o.status === "rejected")).toEqual([]);
      expect(
        execFileSync("git", [`--git-dir=${repoPath}`, "rev-parse", "--is-bare-repository"])
          .toString()
          .trim(),
      ).toBe("true");
      expect(await fs.readFile(path.join(repoPath, "info", "attributes"), "utf8")).toMatch(/^\* !text /);
      // Nothing is left beside it: each staging directory was renamed into place or removed.
      expect((await fs.readdir(root)).filter((name) => name.startsWith(`${path.basename(repoPath)}.`))).toEqual([]);
    }
  });

  it("adds and removes worktrees", async () => {
    const work = await makeWorkRepo(root, "wt-src");
    await fs.writeFile(path.join(work, "f.txt"), "f\n");
    const sha = await commitWorktree({ worktreePath: work, metadata: TEST_COMMIT_METADATA });
    const bare = path.join(root, "wt.git");
    await initBareRepository({ repoPath: bare });
    await fetchCommit({ gitDir: bare, sourceRepoPath: work, sha });
    const wt = path.join(root, "wt-checkout");
    await addWorktree({ gitDir: bare, worktreePath: wt, commit: sha });
    expect(await fs.readFile(path.join(wt, "f.txt"), "utf8")).toBe("f\n");
    await removeWorktree({ gitDir: bare, worktreePath: wt });
    expect(await pathExists(wt)).toBe(false);
    const list = await runGit({ gitDir: bare, args: ["worktree", "list", "--porcelain"] });
    expect(list.stdout.toString("utf8")).not.toContain("wt-checkout");
  });

  it("refuses option-looking or malformed revisions", async () => {
    const bare = path.join(root, "rev.git");
    await initBareRepository({ repoPath: bare });
    await expectGitFailure(revParse({ gitDir: bare, rev: "--output=/tmp/x" }), "usage");
    await expectGitFailure(hasCommit({ gitDir: bare, sha: "HEAD" }), "usage");
  });

  it("dates commits from any whole epoch second, including tiny ones", async () => {
    const repo = await makeWorkRepo(root, "epoch");
    await fs.writeFile(path.join(repo, "e"), "e");
    const sha = await commitWorktree({ worktreePath: repo, metadata: { ...TEST_COMMIT_METADATA, epochSeconds: 1 } });
    const dates = await runGit({ cwd: repo, args: ["log", "-1", "--format=%at %ct", sha] });
    expect(dates.stdout.toString().trim()).toBe("1 1");
  });
});
