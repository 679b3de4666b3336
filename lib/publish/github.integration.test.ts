/**
 * The GitHub provider against the real local forge: create-only pushes, token handling, and how
 * provider answers are classified (refused vs ambiguous).
 */
import fs from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runGit } from "../git/run-git";
import { findFreePort } from "../testing/free-port";
import { createTestDatabase } from "../testing/test-database";
import { candidateRepoPathFor } from "../candidate/candidate-git";
import { buildPushCommand, checkCloneUrl, createGitHubProvider, readTokenFile } from "./github";
import { loadPublicationProvider } from "./load-publication-provider";
import { failureOf, type TPublishTarget } from "./publication-provider";
import { saveGitHubPublishSetting } from "./publish-settings";

const GITHUB_PUBLISH_SETTING_KEY = "publish.github";
import {
  createPublishFixture,
  readForgeBranch,
  startForgeEnvironment,
  type TForgeEnvironment,
  type TPublishFixture,
} from "./testing/publish-fixtures";

describe("GitHub provider", async () => {
  const { db } = await createTestDatabase();
  let env: TForgeEnvironment;
  let f: TPublishFixture;
  let target: TPublishTarget;

  beforeAll(async () => {
    env = await startForgeEnvironment();
    f = await createPublishFixture({ db, env });
    target = { repository: f.repository, cloneUrl: f.cloneUrl, branch: f.branch, baseRef: f.baseRef };
  });
  afterAll(async () => {
    await env?.stop();
  });

  it("never moves an existing branch, not even by a fast-forward", async () => {
    const provider = env.createProvider();
    // the branch exists at the base commit, an ancestor of the approved head
    await runGit({
      gitDir: `${env.dataDir}/forge/${f.repository}.git`,
      args: ["update-ref", `refs/heads/${f.branch}`, f.baseSha],
    });
    const outcome = await provider.pushBranch({
      target,
      headSha: f.headSha,
      sourceGitDir: candidateRepoPathFor(env.dataDir, f.repository),
    });
    expect(outcome.kind).toBe("rejected");
    expect(await readForgeBranch(env, f.repository, f.branch)).toBe(f.baseSha);
    await runGit({
      gitDir: `${env.dataDir}/forge/${f.repository}.git`,
      args: ["update-ref", "-d", `refs/heads/${f.branch}`],
    });
    expect(
      await provider.pushBranch({
        target,
        headSha: f.headSha,
        sourceGitDir: candidateRepoPathFor(env.dataDir, f.repository),
      }),
    ).toEqual({ kind: "pushed" });
    expect(await provider.readRemoteBranch(target)).toBe(f.headSha);
    expect(await provider.readRemoteBranch({ ...target, branch: "school/absent" })).toBeNull();
  });

  it("finds only pull requests of this head branch and base", async () => {
    const provider = env.createProvider();
    const created = await provider.createPullRequest({ target, title: "t", body: "b" });
    expect(created).toMatchObject({
      kind: "created",
      pull: { headSha: f.headSha, headRef: f.branch, baseRef: "main", state: "open" },
    });
    expect(await provider.findPullRequests(target)).toHaveLength(1);
    expect(await provider.findPullRequests({ ...target, baseRef: "develop" })).toHaveLength(0);
    expect(await provider.findPullRequests({ ...target, branch: "school/other" })).toHaveLength(0);
    expect(await provider.createPullRequest({ target, title: "t", body: "b" })).toMatchObject({
      kind: "already_exists",
    });
  });

  it("keeps the token out of argv: it travels only as GIT_CONFIG_* header config", () => {
    const command = buildPushCommand({
      cloneUrl: "https://example.invalid/o/r.git",
      branch: "school/x",
      headSha: "a".repeat(40),
      sourceGitDir: "/tmp/x.git",
      token: "tok-1234567890",
    });
    const basic = Buffer.from("x-access-token:tok-1234567890").toString("base64");
    expect(command.args.join(" ")).not.toContain("tok-1234567890");
    expect(command.args.join(" ")).not.toContain(basic);
    expect(command.args).toContain("--force-with-lease=refs/heads/school/x:");
    expect(command.secretConfig).toContainEqual([
      "http.https://example.invalid/o/r.git.extraHeader",
      `Authorization: Basic ${basic}`,
    ]);
    expect(command.secrets).toEqual(["tok-1234567890", basic]);
  });

  it("refuses clone URLs with credentials or non-http schemes", () => {
    expect(() => checkCloneUrl("https://user:secret@example.invalid/o/r.git")).toThrow(/must not carry credentials/);
    expect(() => checkCloneUrl("file:///srv/o/r.git")).toThrow(/http\(s\)/);
    expect(() => checkCloneUrl("ext::sh -c evil")).toThrow();
    expect(checkCloneUrl("http://127.0.0.1:7490/o/r.git").host).toBe("127.0.0.1:7490");
  });

  it("reads one printable token per call and refuses anything else", async () => {
    const file = path.join(env.dataDir, "credentials", "t1");
    await fs.writeFile(file, "first-line-token\nX-Injected: yes\n");
    expect(await readTokenFile(file, env.dataDir)).toBe("first-line-token");
    await fs.writeFile(file, "two words\n");
    await expect(readTokenFile(file, env.dataDir)).rejects.toMatchObject({ code: "PUBLISH_FAILED" });
    await fs.writeFile(file, "\n");
    await expect(readTokenFile(file, env.dataDir)).rejects.toMatchObject({ code: "PUBLISH_FAILED" });
    const missing = await readTokenFile(path.join(env.dataDir, "credentials", "absent"), env.dataDir).catch(
      (e: unknown) => e,
    );
    expect(failureOf(missing)).toBe("refused");
  });

  it("classifies a bad token as refused and an unreachable provider as ambiguous, never echoing the token", async () => {
    const file = path.join(env.dataDir, "credentials", "wrong");
    await fs.writeFile(file, "wrong-token-value-123456\n");
    const wrong = createGitHubProvider({
      apiBaseUrl: env.forge.url,
      tokenFile: file,
      requestTimeoutMs: 1_000,
      dataDir: env.dataDir,
    });
    const refused = (await wrong.findPullRequests(target).catch((e: unknown) => e)) as Error;
    expect(failureOf(refused)).toBe("refused");
    expect(refused.message).toContain("HTTP 401");
    expect(refused.message).not.toContain("wrong-token-value-123456");
    await wrong.close();
    const port = await findFreePort();
    const down = createGitHubProvider({
      apiBaseUrl: `http://127.0.0.1:${port}`,
      tokenFile: env.tokenFile,
      requestTimeoutMs: 1_000,
      dataDir: env.dataDir,
    });
    const ambiguous = (await down
      .createPullRequest({ target, title: "t", body: "b" })
      .catch((e: unknown) => e)) as Error;
    expect(failureOf(ambiguous)).toBe("ambiguous");
    expect(ambiguous.message).toMatch(/no answer/);
    await down.close();
  });

  it("builds the provider from the operator's publish.github setting, failing closed when it is missing or invalid", async () => {
    await expect(loadPublicationProvider({ db, dataDir: env.dataDir })).rejects.toMatchObject({
      code: "CONFIG_INVALID",
      message: expect.stringContaining("publish.github"),
    });
    await db.operatorSetting.create({
      data: { key: GITHUB_PUBLISH_SETTING_KEY, value: { apiBaseUrl: env.forge.url, tokenFile: "relative/path" } },
    });
    await expect(loadPublicationProvider({ db, dataDir: env.dataDir })).rejects.toMatchObject({
      code: "CONFIG_INVALID",
      message: expect.stringContaining("tokenFile"),
    });
    await db.operatorSetting.update({
      where: { key: GITHUB_PUBLISH_SETTING_KEY },
      data: { value: { apiBaseUrl: env.forge.url, tokenFile: env.tokenFile, token: "inline" } },
    });
    await expect(loadPublicationProvider({ db, dataDir: env.dataDir })).rejects.toMatchObject({
      code: "CONFIG_INVALID",
    });
    await saveGitHubPublishSetting(
      db,
      { apiBaseUrl: env.forge.url, tokenFile: env.tokenFile },
      null,
      "test setup",
      env.dataDir,
    );
    const provider = await loadPublicationProvider({ db, dataDir: env.dataDir });
    try {
      expect(provider.name).toBe("github");
      expect(await provider.findPullRequests(target)).toHaveLength(1);
    } finally {
      await provider.close();
    }
  });

  it("refuses a token file outside DATA_DIR/credentials/ (the session secret, the database password) and a plain-http non-loopback API, on write and on use", async () => {
    const sessionSecret = path.join(env.dataDir, "nextauth-secret");
    await fs.writeFile(sessionSecret, "session-signing-secret-0123456789\n", { mode: 0o600 });
    await fs.writeFile(path.join(env.dataDir, "postgres-password"), "database-password-0123456789\n", { mode: 0o600 });
    for (const tokenFile of [
      sessionSecret,
      path.join(env.dataDir, "postgres-password"),
      path.join(env.dataDir, "credentials", "..", "nextauth-secret"),
    ]) {
      await expect(
        saveGitHubPublishSetting(db, { apiBaseUrl: env.forge.url, tokenFile }, null, "test setup", env.dataDir),
      ).rejects.toMatchObject({
        code: "CREDENTIAL_FILE_REFUSED",
        details: { fieldErrors: { tokenFile: [expect.stringContaining("DATA_DIR/credentials/")] } },
      });
    }
    for (const apiBaseUrl of ["http://api.example.invalid", "http://10.0.0.5:8080", "http://[2001:db8::1]/api/v3"]) {
      await expect(
        saveGitHubPublishSetting(db, { apiBaseUrl, tokenFile: env.tokenFile }, null, "test setup", env.dataDir),
      ).rejects.toMatchObject({
        code: "VALIDATION_FAILED",
        message: expect.stringContaining("must be https"),
      });
    }
    // Loopback in every spelling stays allowed for the local forge.
    for (const apiBaseUrl of [
      "http://127.0.0.1:7490",
      "http://127.8.9.10",
      "http://localhost:7490",
      "http://[::1]:7490",
      "https://api.github.com",
    ]) {
      await expect(
        saveGitHubPublishSetting(db, { apiBaseUrl, tokenFile: env.tokenFile }, null, "test setup", env.dataDir),
      ).resolves.toBeTruthy();
    }

    // A value stored before the rule (written past the registry) is refused when used, and the secret is never sent.
    await db.operatorSetting.update({
      where: { key: GITHUB_PUBLISH_SETTING_KEY },
      data: { value: { apiBaseUrl: env.forge.url, tokenFile: sessionSecret } },
    });
    const provider = await loadPublicationProvider({ db, dataDir: env.dataDir });
    try {
      const refused = (await provider.findPullRequests(target).catch((e: unknown) => e)) as Error;
      expect(failureOf(refused)).toBe("refused");
      expect(refused.message).toMatch(/not inside DATA_DIR\/credentials\//);
    } finally {
      await provider.close();
    }
    expect(() =>
      createGitHubProvider({
        apiBaseUrl: "http://api.example.invalid",
        tokenFile: env.tokenFile,
        dataDir: env.dataDir,
      }),
    ).toThrow(/publication API http:\/\/api.example.invalid is refused: it must be https/);
  });

  it("refuses at use time a symlink inside DATA_DIR/credentials/ that points at a secret, and a hard link to one", async () => {
    const secret = path.join(env.dataDir, "nextauth-secret");
    await fs.writeFile(secret, "session-signing-secret-0123456789\n", { mode: 0o600 });
    const link = path.join(env.dataDir, "credentials", "innocent-token");
    await fs.symlink(secret, link);
    await expect(readTokenFile(link, env.dataDir)).rejects.toMatchObject({
      code: "PUBLISH_FAILED",
      message: expect.stringContaining("real path is not inside DATA_DIR/credentials/"),
    });
    await expect(
      saveGitHubPublishSetting(db, { apiBaseUrl: env.forge.url, tokenFile: link }, null, "test setup", env.dataDir),
    ).rejects.toMatchObject({
      code: "CREDENTIAL_FILE_REFUSED",
    });
    const hard = path.join(env.dataDir, "credentials", "hard-token");
    await fs.link(secret, hard);
    await expect(readTokenFile(hard, env.dataDir)).rejects.toMatchObject({
      message: expect.stringContaining("School-Core's own secrets"),
    });
  });
});
