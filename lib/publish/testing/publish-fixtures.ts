/**
 * Test fixtures for publication: a real local forge in a temporary DATA_DIR, real bare
 * repositories built with git, and the rows an approved task has (TargetRepository, Task in
 * `approved`, Candidate, TrustedManifest, VerificationEvidence, ReviewDecision, a teacher User),
 * written directly with Prisma because other modules own their use cases.
 */
import { createHash, randomBytes, randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Db } from "../../db/client";
import { initBareRepository } from "../../git/git-bare-repository";
import { runGit } from "../../git/run-git";
import { candidateRepoPathFor } from "../../candidate/candidate-git";
import { createForgeRepository } from "../../../sidecars/local-forge/create-forge-repository";
import { forgeGitDir, parseForgeFullName } from "../../../sidecars/local-forge/forge-paths";
import { startLocalForge, type TLocalForge } from "../../../sidecars/local-forge/start-local-forge";
import { createGitHubProvider } from "../github";
import type { PublicationProvider } from "../publication-provider";
import { candidateBranchOf } from "../reconcile";
import { ensureCredentialsDir } from "../../secrets/credential-file";

export type TForgeEnvironment = {
  dataDir: string;
  forge: TLocalForge;
  token: string;
  tokenFile: string;
  admin: { adminUrl: string; adminToken: string };
  /** a GitHub provider pointed at the forge; closed by stop() */
  createProvider(options?: {
    requestTimeoutMs?: number;
    pushTimeoutMs?: number;
    tokenFile?: string;
  }): PublicationProvider;
  stop(): Promise<void>;
};

/** A temporary DATA_DIR with a running forge and a token file for the provider. */
export async function startForgeEnvironment(options: { token?: string } = {}): Promise<TForgeEnvironment> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-publish-"));
  const token = options.token ?? `forge-${randomBytes(18).toString("hex")}`;
  const adminToken = `admin-${randomBytes(18).toString("hex")}`;
  const tokenFile = path.join(ensureCredentialsDir(dataDir), "forge-token");
  await fs.writeFile(tokenFile, `${token}\n`, { mode: 0o600 });
  const forge = await startLocalForge({ port: 0, adminPort: 0, token, adminToken, dataDir });
  const providers: PublicationProvider[] = [];
  return {
    dataDir,
    forge,
    token,
    tokenFile,
    admin: { adminUrl: forge.adminUrl, adminToken },
    createProvider(providerOptions = {}) {
      const provider = createGitHubProvider({
        apiBaseUrl: forge.url,
        tokenFile: providerOptions.tokenFile ?? tokenFile,
        requestTimeoutMs: providerOptions.requestTimeoutMs ?? 5_000,
        pushTimeoutMs: providerOptions.pushTimeoutMs ?? 30_000,
        dataDir,
      });
      providers.push(provider);
      return provider;
    },
    async stop() {
      await Promise.all(providers.map((p) => p.close().catch(() => undefined)));
      await forge.stop();
      await fs.rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function git(cwd: string, args: string[]): Promise<string> {
  return (await runGit({ cwd, args })).stdout.toString("utf8").trim();
}

async function commitFile(workDir: string, file: string, content: string, message: string): Promise<string> {
  await fs.mkdir(path.dirname(path.join(workDir, file)), { recursive: true });
  await fs.writeFile(path.join(workDir, file), content);
  await git(workDir, ["add", "--", file]);
  await git(workDir, ["commit", "--quiet", "-m", message]);
  return git(workDir, ["rev-parse", "HEAD"]);
}

let manifestVersion = 1_000_000 + Math.floor(Math.random() * 1_000_000_000);

export type TPublishFixture = {
  taskId: string;
  issueNumber: number;
  repository: string;
  cloneUrl: string;
  branch: string;
  baseRef: string;
  baseSha: string;
  headSha: string;
  candidateId: string;
  decisionId: string | null;
  evidenceDigest: string;
  teacherId: string;
  teacherName: string;
};

export type TPublishFixtureOptions = {
  db: Db;
  env: TForgeEnvironment;
  /** owner/name; a fresh one per fixture by default so forge counts are per test */
  repository?: string;
  /** "head" = approval for the candidate's head SHA; "other_sha" = a decision bound to another SHA */
  approval?: "head" | "other_sha" | "reject" | "none";
};

/** An approved task whose candidate commit sits in the candidate repository, and a forge repo with its base. */
export async function createPublishFixture(options: TPublishFixtureOptions): Promise<TPublishFixture> {
  const { db, env } = options;
  const repository = options.repository ?? `school/app-${randomBytes(4).toString("hex")}`;
  const repo = parseForgeFullName(repository)!;
  const baseRef = "main";
  const forgeRepo = await createForgeRepository({ dataDir: env.dataDir, repository, defaultBranch: baseRef });

  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-publish-work-"));
  try {
    await git(workDir, ["init", "--quiet", `--initial-branch=${baseRef}`]);
    const baseSha = await commitFile(workDir, "README.md", `# ${repository}\n`, "base");
    await git(workDir, ["push", "--quiet", forgeRepo.gitDir, `${baseRef}:refs/heads/${baseRef}`]);

    const taskId = randomUUID();
    const branch = candidateBranchOf(taskId);
    await git(workDir, ["checkout", "--quiet", "-b", branch]);
    const headSha = await commitFile(
      workDir,
      "src/answer.txt",
      `answer for ${taskId}\n<script>alert(1)</script>\n`,
      `Fix issue for task ${taskId}`,
    );
    const candidateDir = candidateRepoPathFor(env.dataDir, repository);
    await initBareRepository({ repoPath: candidateDir });
    await git(workDir, ["push", "--quiet", candidateDir, `${branch}:refs/heads/${branch}`]);

    const teacherName = "Ada Teacher";
    const teacher = await db.user.create({
      data: {
        email: `teacher-${taskId}@school.invalid`,
        name: teacherName,
        passwordHash: "unused",
        roles: ["teacher"],
      },
    });
    const target = await db.targetRepository.upsert({
      where: { name: repository },
      create: { name: repository, cloneUrl: `${env.forge.url}/${repo.fullName}.git`, defaultBranch: baseRef },
      update: {},
    });
    const issueNumber = 7;
    await db.task.create({
      data: {
        id: taskId,
        repositoryId: target.id,
        issueNumber,
        issueTitle: "Make the answer file exist",
        prompt: "untrusted",
        baseRef,
        baseSha,
        state: "approved",
        operationId: randomUUID(),
        limits: {},
      },
    });
    const archiveDigest = createHash("sha256").update(`archive-${taskId}`).digest("hex");
    await db.artifact.create({ data: { digest: archiveDigest, sizeBytes: 100n, kind: "candidate-archive" } });
    const candidateId = `cand-${taskId}`;
    await db.candidate.create({
      data: {
        id: candidateId,
        taskId,
        issueNumber,
        repository,
        baseRef,
        baseSha,
        headSha,
        branch,
        changedFiles: ["src/answer.txt"],
        diffDigest: createHash("sha256").update(`diff-${taskId}`).digest("hex"),
        archiveDigest,
        fileDigests: {},
      },
    });
    const manifestDigest = createHash("sha256").update(`manifest-${taskId}`).digest("hex");
    const manifest = await db.trustedManifest.create({
      data: { version: manifestVersion++, digest: manifestDigest, content: { checks: ["test"] } },
    });
    const evidenceDigest = createHash("sha256").update(`evidence-${taskId}`).digest("hex");
    const evidence = await db.verificationEvidence.create({
      data: {
        taskId,
        candidateId,
        repository,
        baseSha,
        headSha,
        manifestId: manifest.id,
        manifestDigest,
        imageRef: "verifier@sha256:test",
        checks: [{ name: "test", result: "pass" }],
        isPass: true,
        verdictReason: "all trusted checks passed",
        digest: evidenceDigest,
      },
    });
    const approval = options.approval ?? "head";
    let decisionId: string | null = null;
    if (approval !== "none") {
      const decision = await db.reviewDecision.create({
        data: {
          taskId,
          candidateId,
          headSha: approval === "other_sha" ? "b".repeat(40) : headSha,
          evidenceId: evidence.id,
          manifestDigest,
          verdict: approval === "reject" ? "reject" : "approve",
          comment: "looks right",
          teacherId: teacher.id,
        },
      });
      decisionId = decision.id;
    }
    return {
      taskId,
      issueNumber,
      repository,
      cloneUrl: target.cloneUrl,
      branch,
      baseRef,
      baseSha,
      headSha,
      candidateId,
      decisionId,
      evidenceDigest,
      teacherId: teacher.id,
      teacherName,
    };
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

/** Puts another commit on the forge at the candidate's branch, as if someone else pushed first. */
export async function pushForeignBranch(env: TForgeEnvironment, fixture: TPublishFixture): Promise<string> {
  const workDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-publish-foreign-"));
  try {
    const forgeDir = forgeGitDir(env.dataDir, parseForgeFullName(fixture.repository)!);
    await git(workDir, ["init", "--quiet", `--initial-branch=${fixture.baseRef}`]);
    await git(workDir, ["fetch", "--quiet", forgeDir, `refs/heads/${fixture.baseRef}:refs/remotes/forge/base`]);
    await git(workDir, ["checkout", "--quiet", "-B", fixture.baseRef, "refs/remotes/forge/base"]);
    const sha = await commitFile(workDir, "src/foreign.txt", "someone else\n", "foreign commit");
    await git(workDir, ["push", "--quiet", forgeDir, `HEAD:refs/heads/${fixture.branch}`]);
    return sha;
  } finally {
    await fs.rm(workDir, { recursive: true, force: true });
  }
}

/** The forge's own view (its JSON file, read through the admin-free API with the token). */
export async function listForgePulls(
  env: TForgeEnvironment,
  repository: string,
): Promise<{ number: number; state: string; head: { ref: string; sha: string }; html_url: string; body: string }[]> {
  const response = await fetch(`${env.forge.url}/repos/${repository}/pulls?state=all`, {
    headers: { authorization: `Bearer ${env.token}` },
  });
  if (!response.ok) throw new Error(`forge list answered ${response.status}`);
  return (await response.json()) as {
    number: number;
    state: string;
    head: { ref: string; sha: string };
    html_url: string;
    body: string;
  }[];
}

export async function readForgeBranch(
  env: TForgeEnvironment,
  repository: string,
  branch: string,
): Promise<string | null> {
  const response = await fetch(`${env.forge.url}/repos/${repository}/git/ref/heads/${branch}`, {
    headers: { authorization: `Bearer ${env.token}` },
  });
  if (response.status === 404) return null;
  return ((await response.json()) as { object: { sha: string } }).object.sha;
}
