import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../errors";
import {
  addWorktree,
  archiveTree,
  buildGitArgv,
  buildGitEnv,
  commitWorktree,
  diffTreeRaw,
  fetchCommit,
  hasCommit,
  initBareRepository,
  lsTree,
  removeWorktree,
  revParse,
  runGit,
  streamBinaryDiff,
  type TCommitMetadata,
} from "./run-git";

const METADATA: TCommitMetadata = {
  authorName: "Test Author",
  authorEmail: "author@example.invalid",
  committerName: "Test Committer",
  committerEmail: "committer@example.invalid",
  epochSeconds: 1_700_000_000,
  message: "fixed message\n",
};

let root: string;

beforeAll(async () => {
  root = await fs.mkdtemp(path.join(os.tmpdir(), "run-git-test-"));
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

async function makeWorkRepo(name: string): Promise<string> {
  const dir = path.join(root, name);
  await fs.mkdir(dir, { recursive: true });
  await runGit({ args: ["init", "--quiet", "--initial-branch=main", "--", dir] });
  return dir;
}

/** Plain git with the caller's environment: the control that proves a trap is armed. */
function plainGit(cwd: string, args: string[], env: NodeJS.ProcessEnv = process.env): string {
  return execFileSync("git", args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(() => true, () => false);
}

async function expectGitFailure(promise: Promise<unknown>, kind: string): Promise<AppError> {
  const error = await promise.then(() => undefined, (e: unknown) => e);
  expect(error).toBeInstanceOf(AppError);
  expect((error as AppError).code).toBe("GIT_FAILED");
  expect((error as AppError).details?.kind).toBe(kind);
  return error as AppError;
}

describe("runGit isolation", () => {
  it("inherits nothing from the parent environment but PATH", () => {
    const saved = { ...process.env };
    process.env.GIT_DIR = "/nonexistent";
    process.env.GIT_CONFIG_PARAMETERS = "'core.hooksPath'='/tmp/evil'";
    process.env.GIT_ASKPASS = "/tmp/evil-askpass";
    try {
      const env = buildGitEnv();
      expect(env.GIT_DIR).toBeUndefined();
      expect(env.GIT_CONFIG_PARAMETERS).toBeUndefined();
      expect(env.GIT_ASKPASS).toBeUndefined();
      expect(env.GIT_CONFIG_NOSYSTEM).toBe("1");
      expect(env.GIT_CONFIG_GLOBAL).toBe("/dev/null");
      expect(env.GIT_TERMINAL_PROMPT).toBe("0");
      expect(env.HOME).not.toBe(saved.HOME);
    } finally {
      process.env = saved;
    }
  });

  it("refuses extra environment variables that could redirect git", () => {
    expect(() => buildGitEnv({ GIT_DIR: "/tmp/x" })).toThrow(AppError);
    expect(() => buildGitEnv({ GIT_CONFIG_GLOBAL: "/tmp/x" })).toThrow(AppError);
  });

  it("runs no hook, fsmonitor or signing program configured in the repository", async () => {
    const repo = await makeWorkRepo("hooks");
    const marker = path.join(root, "hook-ran");
    const hookDir = path.join(root, "evil-hooks");
    await fs.mkdir(hookDir, { recursive: true });
    const script = `#!/bin/sh\necho ran >> ${marker}\nexit 0\n`;
    for (const hook of ["pre-commit", "commit-msg", "post-commit", "post-checkout"]) {
      await fs.writeFile(path.join(hookDir, hook), script, { mode: 0o755 });
      await fs.writeFile(path.join(repo, ".git", "hooks", hook), script, { mode: 0o755 });
    }
    const gpg = path.join(root, "evil-gpg");
    await fs.writeFile(gpg, script, { mode: 0o755 });
    plainGit(repo, ["config", "core.hooksPath", hookDir]);
    plainGit(repo, ["config", "commit.gpgSign", "true"]);
    plainGit(repo, ["config", "gpg.program", gpg]);
    plainGit(repo, ["config", "core.fsmonitor", gpg]);
    await fs.writeFile(path.join(repo, "a.txt"), "a\n");

    const sha = await commitWorktree({ worktreePath: repo, metadata: METADATA });
    await runGit({ cwd: repo, args: ["status", "--porcelain"] });
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(await exists(marker)).toBe(false);

    // Control: the same repository with plain git does run the hook, so the trap was armed.
    await fs.writeFile(path.join(repo, "b.txt"), "b\n");
    plainGit(repo, ["add", "b.txt"]);
    try {
      plainGit(repo, ["-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "control"]);
    } catch {
      // the fake gpg does not produce a signature; the hooks before it ran anyway
    }
    expect(await exists(marker)).toBe(true);
  });

  it("ignores the caller's global configuration", async () => {
    const fakeHome = path.join(root, "fake-home");
    await fs.mkdir(fakeHome, { recursive: true });
    await fs.writeFile(path.join(fakeHome, ".gitconfig"), "[alias]\n\tzzz-school = version\n");
    const saved = process.env.HOME;
    process.env.HOME = fakeHome;
    try {
      // Control: plain git with that HOME knows the alias.
      expect(plainGit(root, ["zzz-school"], { ...process.env, HOME: fakeHome })).toContain("git version");
      await expectGitFailure(runGit({ args: ["zzz-school"] }), "exit");
    } finally {
      process.env.HOME = saved;
    }
  });

  it("fails with a typed, bounded and redacted error", async () => {
    const error = await expectGitFailure(runGit({ args: ["rev-parse", "--git-dir"], gitDir: path.join(root, "no-such-repo-ghp_abcdefgh12345678") }), "exit");
    expect(error.message).toContain("[REDACTED]");
    expect(error.message).not.toContain("ghp_abcdefgh12345678");
    expect(error.message.length).toBeLessThanOrEqual(2048);
  });

  it("kills git after the timeout", async () => {
    const bare = path.join(root, "timeout.git");
    await initBareRepository({ repoPath: bare });
    async function* forever(): AsyncGenerator<string> {
      yield "feature done\n";
      await new Promise((resolve) => setTimeout(resolve, 60_000));
    }
    const started = Date.now();
    await expectGitFailure(runGit({ gitDir: bare, args: ["fast-import", "--quiet", "--done"], input: forever(), timeoutMs: 300 }), "timeout");
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("bounds buffered output", async () => {
    const repo = await makeWorkRepo("big-output");
    await fs.writeFile(path.join(repo, "big.bin"), Buffer.alloc(256 * 1024, 7));
    await commitWorktree({ worktreePath: repo, metadata: METADATA });
    await expectGitFailure(runGit({ cwd: repo, args: ["cat-file", "blob", "HEAD:big.bin"], maxStdoutBytes: 1024 }), "output_limit");
    const ok = await runGit({ cwd: repo, args: ["cat-file", "blob", "HEAD:big.bin"] });
    expect(ok.stdout.length).toBe(256 * 1024);
  });

  it("refuses option-looking or malformed revisions", async () => {
    const bare = path.join(root, "rev.git");
    await initBareRepository({ repoPath: bare });
    await expectGitFailure(revParse({ gitDir: bare, rev: "--output=/tmp/x" }), "usage");
    await expectGitFailure(hasCommit({ gitDir: bare, sha: "HEAD" }), "usage");
  });
});

describe("git helpers", () => {
  it("commits deterministically, fetches by SHA, diffs, lists and archives", async () => {
    const work = await makeWorkRepo("helpers-src");
    await fs.writeFile(path.join(work, "keep.txt"), "keep\n");
    await fs.writeFile(path.join(work, "change.txt"), "before\n");
    await fs.writeFile(path.join(work, "gone.txt"), "gone\n");
    const base = await commitWorktree({ worktreePath: work, metadata: METADATA });

    // Same tree, same metadata → same SHA in another repository.
    const twin = await makeWorkRepo("helpers-twin");
    for (const f of ["keep.txt", "change.txt", "gone.txt"]) await fs.copyFile(path.join(work, f), path.join(twin, f));
    expect(await commitWorktree({ worktreePath: twin, metadata: METADATA })).toBe(base);

    await fs.writeFile(path.join(work, "change.txt"), "after\n");
    await fs.rm(path.join(work, "gone.txt"));
    await fs.writeFile(path.join(work, "new.sh"), "#!/bin/sh\n", { mode: 0o755 });
    await fs.writeFile(path.join(work, ".gitattributes"), "new.sh export-ignore\n");
    const head = await commitWorktree({ worktreePath: work, metadata: { ...METADATA, message: "second\n" } });

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
    expect(listing.map((e) => `${e.mode} ${e.path}`).sort()).toEqual(["100644 .gitattributes", "100644 change.txt", "100644 keep.txt", "100755 new.sh"]);

    const chunks: Buffer[] = [];
    await streamBinaryDiff({ gitDir: bare, from: base, to: head, onChunk: (c) => chunks.push(c) });
    const diff = Buffer.concat(chunks).toString("utf8");
    expect(diff).toContain("diff --git a/change.txt b/change.txt");
    expect(diff).toContain("+after");

    // The in-tree export-ignore is neutralised by the repository's info/attributes.
    const tarPath = path.join(root, "helpers.tar");
    await archiveTree({ gitDir: bare, treeish: head, outputPath: tarPath });
    const names = execFileSync("tar", ["-tf", tarPath], { encoding: "utf8" }).split("\n").filter(Boolean);
    expect(names).toContain("new.sh");
  });

  it("adds and removes worktrees", async () => {
    const work = await makeWorkRepo("wt-src");
    await fs.writeFile(path.join(work, "f.txt"), "f\n");
    const sha = await commitWorktree({ worktreePath: work, metadata: METADATA });
    const bare = path.join(root, "wt.git");
    await initBareRepository({ repoPath: bare });
    await fetchCommit({ gitDir: bare, sourceRepoPath: work, sha });
    const wt = path.join(root, "wt-checkout");
    await addWorktree({ gitDir: bare, worktreePath: wt, commit: sha });
    expect(await fs.readFile(path.join(wt, "f.txt"), "utf8")).toBe("f\n");
    await removeWorktree({ gitDir: bare, worktreePath: wt });
    expect(await exists(wt)).toBe(false);
    const list = await runGit({ gitDir: bare, args: ["worktree", "list", "--porcelain"] });
    expect(list.stdout.toString("utf8")).not.toContain("wt-checkout");
  });
});

describe("remote transports and secrets", () => {
  it("refuses network transports unless asked, and keeps secret config out of argv and errors", async () => {
    const bare = path.join(root, "transport.git");
    await initBareRepository({ repoPath: bare });
    const refused = await expectGitFailure(runGit({ gitDir: bare, args: ["ls-remote", "http://127.0.0.1:9/x.git"], timeoutMs: 20_000 }), "exit");
    expect(refused.message).toMatch(/not allowed/);

    const secret = "Authorization: Bearer s3cr3t-value-for-test";
    const allowed = await expectGitFailure(
      runGit({ gitDir: bare, args: ["ls-remote", "http://127.0.0.1:9/x.git"], remoteProtocols: ["http"], secretConfig: [["http.extraHeader", secret]], secrets: ["s3cr3t-value-for-test"], timeoutMs: 20_000 }),
      "exit",
    );
    expect(allowed.message).not.toMatch(/not allowed/);
    expect(allowed.message).not.toContain("s3cr3t-value-for-test");
    const argv = buildGitArgv({ args: ["ls-remote"], remoteProtocols: ["http"] });
    expect(argv.join(" ")).not.toContain("s3cr3t");
    expect(buildGitEnv({}, [["http.extraHeader", secret]]).GIT_CONFIG_VALUE_0).toBe(secret);
  });

  it("keeps the hardening settings above secret config", async () => {
    const repo = await makeWorkRepo("secret-config");
    const marker = path.join(root, "secret-config-hook-ran");
    const hookDir = path.join(root, "secret-config-hooks");
    await fs.mkdir(hookDir, { recursive: true });
    await fs.writeFile(path.join(hookDir, "pre-commit"), `#!/bin/sh\ntouch ${marker}\n`, { mode: 0o755 });
    await fs.writeFile(path.join(repo, "x"), "x");
    await runGit({ cwd: repo, args: ["add", "x"] });
    await runGit({ cwd: repo, args: ["commit", "-q", "-m", "x"], secretConfig: [["core.hooksPath", hookDir]] });
    await fs.writeFile(path.join(repo, "y"), "y");
    await runGit({ cwd: repo, args: ["add", "y"] });
    await runGit({ cwd: repo, args: ["commit", "-q", "-m", "y"], config: [["core.hooksPath", hookDir]] });
    expect(await exists(marker)).toBe(false);
    expect(() => buildGitArgv({ args: ["status"], config: [["core.hooksPath=/tmp/x -c a", "b"]] })).toThrow(AppError);
  });

  it("dates commits from any whole epoch second, including tiny ones", async () => {
    const repo = await makeWorkRepo("epoch");
    await fs.writeFile(path.join(repo, "e"), "e");
    const sha = await commitWorktree({ worktreePath: repo, metadata: { ...METADATA, epochSeconds: 1 } });
    const dates = await runGit({ cwd: repo, args: ["log", "-1", "--format=%at %ct", sha] });
    expect(dates.stdout.toString().trim()).toBe("1 1");
  });
});
