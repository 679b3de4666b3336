/**
 * The runner's hardening, proved against armed traps: nothing inherited from the parent's
 * environment or global configuration, no hook/fsmonitor/signing program from the repository,
 * timeouts and output caps that kill git, bounded redacted errors, and network transports and
 * secret config only when asked for.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../errors";
import { initBareRepository } from "./git-bare-repository";
import { commitWorktree } from "./git-commit";
import { buildGitArgv, buildGitEnv, runGit } from "./run-git";
import {
  expectGitFailure,
  makeTempRoot,
  makeWorkRepo,
  pathExists,
  TEST_COMMIT_METADATA,
} from "./testing/git-test-fixture";

let root: string;

beforeAll(async () => {
  root = await makeTempRoot("run-git-test-");
});
afterAll(async () => {
  await fs.rm(root, { recursive: true, force: true });
});

/** Plain git with the caller's environment: the control that proves a trap is armed. */
function plainGit(cwd: string, args: string[], env: NodeJS.ProcessEnv = process.env): string {
  return execFileSync("git", args, { cwd, env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
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
    const repo = await makeWorkRepo(root, "hooks");
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

    const sha = await commitWorktree({ worktreePath: repo, metadata: TEST_COMMIT_METADATA });
    await runGit({ cwd: repo, args: ["status", "--porcelain"] });
    expect(sha).toMatch(/^[0-9a-f]{40}$/);
    expect(await pathExists(marker)).toBe(false);

    // Control: the same repository with plain git does run the hook, so the trap was armed.
    await fs.writeFile(path.join(repo, "b.txt"), "b\n");
    plainGit(repo, ["add", "b.txt"]);
    try {
      plainGit(repo, ["-c", "user.name=x", "-c", "user.email=x@x", "commit", "-q", "-m", "control"]);
    } catch {
      // the fake gpg does not produce a signature; the hooks before it ran anyway
    }
    expect(await pathExists(marker)).toBe(true);
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
    const error = await expectGitFailure(
      runGit({ args: ["rev-parse", "--git-dir"], gitDir: path.join(root, "no-such-repo-ghp_abcdefgh12345678") }),
      "exit",
    );
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
    await expectGitFailure(
      runGit({ gitDir: bare, args: ["fast-import", "--quiet", "--done"], input: forever(), timeoutMs: 300 }),
      "timeout",
    );
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  it("bounds buffered output", async () => {
    const repo = await makeWorkRepo(root, "big-output");
    await fs.writeFile(path.join(repo, "big.bin"), Buffer.alloc(256 * 1024, 7));
    await commitWorktree({ worktreePath: repo, metadata: TEST_COMMIT_METADATA });
    await expectGitFailure(
      runGit({ cwd: repo, args: ["cat-file", "blob", "HEAD:big.bin"], maxStdoutBytes: 1024 }),
      "output_limit",
    );
    const ok = await runGit({ cwd: repo, args: ["cat-file", "blob", "HEAD:big.bin"] });
    expect(ok.stdout.length).toBe(256 * 1024);
  });
});

describe("remote transports and secrets", () => {
  it("refuses network transports unless asked, and keeps secret config out of argv and errors", async () => {
    const bare = path.join(root, "transport.git");
    await initBareRepository({ repoPath: bare });
    const refused = await expectGitFailure(
      runGit({ gitDir: bare, args: ["ls-remote", "http://127.0.0.1:9/x.git"], timeoutMs: 20_000 }),
      "exit",
    );
    expect(refused.message).toMatch(/not allowed/);

    const secret = "Authorization: Bearer s3cr3t-value-for-test";
    const allowed = await expectGitFailure(
      runGit({
        gitDir: bare,
        args: ["ls-remote", "http://127.0.0.1:9/x.git"],
        remoteProtocols: ["http"],
        secretConfig: [["http.http://127.0.0.1:9/x.git.extraHeader", secret]],
        secrets: ["s3cr3t-value-for-test"],
        timeoutMs: 20_000,
      }),
      "exit",
    );
    expect(allowed.message).not.toMatch(/not allowed/);
    expect(allowed.message).not.toContain("s3cr3t-value-for-test");
    const argv = buildGitArgv({ args: ["ls-remote"], remoteProtocols: ["http"] });
    expect(argv.join(" ")).not.toContain("s3cr3t");
    expect(buildGitEnv({}, [["http.https://forge.example/o/r.git.extraHeader", secret]]).GIT_CONFIG_VALUE_0).toBe(
      secret,
    );
  });

  it("refuses a global http.extraHeader: a credential header is always scoped to one URL", () => {
    expect(() => buildGitEnv({}, [["http.extraHeader", "Authorization: Bearer x"]])).toThrow(
      /http\.<url>\.extraHeader/,
    );
    expect(() => buildGitEnv({}, [["HTTP.EXTRAHEADER", "Authorization: Bearer x"]])).toThrow(
      /global http\.extraHeader/,
    );
  });

  it("keeps the hardening settings above secret config", async () => {
    const repo = await makeWorkRepo(root, "secret-config");
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
    expect(await pathExists(marker)).toBe(false);
    expect(() => buildGitArgv({ args: ["status"], config: [["core.hooksPath=/tmp/x -c a", "b"]] })).toThrow(AppError);
  });
});
