/**
 * The control plane's own bare mirror of each target repository. Base refs resolve to full SHAs
 * here, the base tree for a guest is archived from here, and candidates are imported on top of
 * commits from here — never from anything a guest produced.
 */
import path from "node:path";
import { pgPoolOf, type Db } from "../db/client";
import { withSessionLock } from "../db/session-lock";
import { initBareRepository } from "../git/git-bare-repository";
import { archiveTree, revParse } from "../git/git-plumbing";
import { runGit } from "../git/run-git";
import { AppError } from "../errors";
import { checkTargetCloneUrl, mirrorCredentialConfig } from "./clone-url";
import type { TMirrorCredential } from "./mirror-credentials";

export function mirrorPathFor(dataDir: string, repository: string): string {
  return path.join(dataDir, "mirrors", `${repository.replace("/", "__")}.git`);
}

export type TMirrorSource = { cloneUrl: string; credential?: TMirrorCredential };

/** Syncs in flight per mirror in this process: each waits for the one before it (one lock connection per mirror, not one per caller). */
const syncsInFlight = new Map<string, Promise<string>>();
const DEFAULT_FETCH_TIMEOUT_MS = 120_000;
/** A sync waits at most this long for another process's fetch of the same mirror (beyond its own timeout). */
const LOCK_WAIT_MARGIN_MS = 30_000;

/**
 * Fetches every branch of the target into the mirror (created on first use). A clone URL that is
 * neither https, loopback http nor a local path is refused here too (rows saved before the rule).
 * Task creation, provisioning, probes and dependency bundles may sync one mirror at once, from any
 * number of worker and web processes on any number of hosts sharing DATA_DIR: in one process they
 * take turns, and across processes each fetch holds the mirror's PostgreSQL advisory lock
 * (lib/db/session-lock.ts), so two fetches never race for the mirror's ref locks.
 */
export async function syncMirror(options: {
  db: Db;
  dataDir: string;
  repository: string;
  source: TMirrorSource;
  timeoutMs?: number;
}): Promise<string> {
  const mirror = mirrorPathFor(options.dataDir, options.repository);
  const previous = syncsInFlight.get(mirror);
  const sync = (previous ?? Promise.resolve(mirror)).then(
    () => syncMirrorLocked(options, mirror),
    () => syncMirrorLocked(options, mirror),
  );
  syncsInFlight.set(mirror, sync);
  try {
    return await sync;
  } finally {
    if (syncsInFlight.get(mirror) === sync) syncsInFlight.delete(mirror);
  }
}

async function syncMirrorLocked(
  options: { db: Db; repository: string; source: TMirrorSource; timeoutMs?: number },
  mirror: string,
): Promise<string> {
  const timeoutMs = options.timeoutMs ?? DEFAULT_FETCH_TIMEOUT_MS;
  const outcome = await withSessionLock(
    pgPoolOf(options.db),
    `school-core:mirror:${options.repository}`,
    { waitMs: timeoutMs + LOCK_WAIT_MARGIN_MS },
    () => syncMirrorNow({ ...options, timeoutMs }, mirror),
  );
  if (outcome.kind === "busy")
    throw new AppError(
      "GIT_FAILED",
      `The mirror of ${options.repository} has been busy with another process's fetch for over ${Math.round((timeoutMs + LOCK_WAIT_MARGIN_MS) / 1000)} s; try again.`,
    );
  return outcome.value;
}

async function syncMirrorNow(
  options: { repository: string; source: TMirrorSource; timeoutMs: number },
  mirror: string,
): Promise<string> {
  await initBareRepository({ repoPath: mirror });
  const check = checkTargetCloneUrl(options.source.cloneUrl);
  if (check.kind === "refused")
    throw new AppError("VALIDATION_FAILED", `Repository ${options.repository}: ${check.reason}.`);
  const { cloneUrl, credential } = options.source;
  const secretConfig = mirrorCredentialConfig({
    cloneUrl,
    token: credential?.token,
    apiBaseUrl: credential?.apiBaseUrl,
  });
  await runGit({
    gitDir: mirror,
    args: [
      "fetch",
      "--quiet",
      "--prune",
      "--no-tags",
      "--no-recurse-submodules",
      "--",
      options.source.cloneUrl,
      "+refs/heads/*:refs/heads/*",
    ],
    remoteProtocols: ["file", "http", "https"],
    secretConfig,
    secrets: credential ? [credential.token] : [],
    timeoutMs: options.timeoutMs,
  });
  return mirror;
}

/** A branch name, tag or full SHA → the full commit SHA the control plane observed. */
export async function resolveBaseRef(mirror: string, ref: string): Promise<string> {
  if (!/^[A-Za-z0-9._/-]{1,250}$/.test(ref) || ref.includes("..") || ref.startsWith("-"))
    throw new AppError("VALIDATION_FAILED", "The base ref is not a plain branch, tag or SHA.");
  const candidates = /^[0-9a-f]{40}$/.test(ref) ? [ref] : [`refs/heads/${ref}`, `refs/tags/${ref}`];
  for (const candidate of candidates) {
    const sha = await revParse({ gitDir: mirror, rev: candidate, peelTo: "commit" });
    if (sha) return sha;
  }
  throw new AppError("BASE_UNAVAILABLE", `The base ref ${ref} does not exist in the control plane's mirror.`);
}

/** repository.tar for the guest: the tree at exactly the base SHA, made by `git archive`. */
export async function writeBaseArchive(mirror: string, baseSha: string, outputPath: string): Promise<void> {
  await archiveTree({ gitDir: mirror, treeish: baseSha, outputPath });
}

/** Selected repository context for the prompt: the file list and a README excerpt (untrusted). */
export async function readRepositoryContext(
  mirror: string,
  baseSha: string,
): Promise<{ paths: string[]; readmeExcerpt: string | null }> {
  const list = await runGit({
    gitDir: mirror,
    args: ["ls-tree", "-r", "-z", "--name-only", baseSha],
    maxStdoutBytes: 4 * 1024 * 1024,
  });
  const paths = list.stdout.toString("utf8").split("\0").filter(Boolean).slice(0, 2000);
  const readme = paths.find((p) => /^readme(\.md|\.txt)?$/i.test(p));
  let readmeExcerpt: string | null = null;
  if (readme) {
    const blob = await runGit({
      gitDir: mirror,
      args: ["cat-file", "blob", `${baseSha}:${readme}`],
      maxStdoutBytes: 1024 * 1024,
      okExitCodes: [0, 128],
    });
    readmeExcerpt = blob.exitCode === 0 ? blob.stdout.toString("utf8").slice(0, 8000) : null;
  }
  return { paths, readmeExcerpt };
}
