/**
 * An agent's code — a directory or an archive the operator provides — checked like a candidate
 * archive (lib/candidate's single-pass hostile-archive validator, under the agent-code limits
 * below) and stored content-addressed in the artifact store. A refused archive stores nothing: the
 * store is written only after an accepted verdict, and under the digest that verdict hashed.
 * The same pass finds the lockfile the code carries, if any (agent-code-lockfile.ts),
 * so the version records the recipe its dependencies are built with (issue 26).
 */
import fs from "node:fs/promises";
import path from "node:path";
import { createFsArtifactStore, defaultArtifactRoot } from "../artifacts/fs-artifact-store";
import { recordArtifact } from "../artifacts/artifact.repo";
import { ZSHA256_HEX } from "../artifacts/artifact-store";
import { ZArchiveLimitsSchema, type TArchiveLimits } from "../candidate/archive-limits";
import { refusal, type TArchiveRefusal } from "../candidate/archive-refusals";
import { validateArchive } from "../candidate/validate-archive";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { AGENT_CODE_MAX_ARCHIVE_BYTES } from "../contract/agent-code-upload";
import type { TLockfileRecipeKind } from "../contract/lockfiles";
import { pickAgentLockfile, readAgentCodeLockfile } from "./agent-code-lockfile";
import { packAgentDirectory } from "./pack-agent-directory";

/**
 * Smaller than a candidate's: an agent is a program, not a repository, and its archive is uploaded
 * into every guest that runs it (so it must also fit the task's maxUploadBytes).
 */
export const AGENT_CODE_LIMITS: TArchiveLimits = ZArchiveLimitsSchema.parse({
  maxArchiveBytes: AGENT_CODE_MAX_ARCHIVE_BYTES,
  maxTarBytes: 64 * 1024 * 1024,
  maxEntries: 5000,
  maxFileBytes: 16 * 1024 * 1024,
  maxTotalFileBytes: 48 * 1024 * 1024,
  maxPathBytes: 255,
  maxPathDepth: 24,
  maxExtensionHeaderBytes: 64 * 1024,
  maxCompressionRatio: 100,
  isGzipAllowed: true,
  symlinkPolicy: "within-tree",
});

/**
 * A directory or an archive on the operator's machine (CLI), an archive's bytes uploaded in a
 * request, or code already stored by an upload (the operator page sends its digest: a client's
 * claim, checked in recallStoredAgentCode, never trusted).
 */
export type TAgentCodeSource =
  | { kind: "directory"; path: string }
  | { kind: "archive"; path: string }
  | { kind: "upload"; bytes: Buffer }
  | { kind: "stored"; digest: string };
export type TStoredAgentCode = {
  digest: string;
  bytes: number;
  /** the recipe its lockfile selects and that lockfile's digest; null = no lockfile */
  dependencies: { recipe: TLockfileRecipeKind; lockfileDigest: string } | null;
};

function agentCodeRefused(reasons: readonly TArchiveRefusal[]): AppError {
  const first = reasons[0];
  const summary = first ? `${first.code}${first.path ? ` (${first.path})` : ""}` : "no reason";
  return new AppError(
    "ARCHIVE_REFUSED",
    `The agent's code was refused: ${summary}${reasons.length > 1 ? ` and ${reasons.length - 1} more` : ""}.`,
    { reasons: reasons.map((r) => ({ ...r })) },
  );
}

/**
 * Validates and stores the agent's code; throws ARCHIVE_REFUSED (nothing stored) for hostile or
 * oversized code, and VALIDATION_FAILED (nothing stored) for a lockfile no recipe can read (a
 * symlink, or without its manifest).
 */
export async function storeAgentCode(
  deps: { db: Db; dataDir: string },
  source: TAgentCodeSource,
): Promise<TStoredAgentCode> {
  if (source.kind === "stored") return recallStoredAgentCode(deps, source.digest);
  await fs.mkdir(path.join(deps.dataDir, "staging"), { recursive: true });
  const staging = await fs.mkdtemp(path.join(deps.dataDir, "staging", "agent-code-"));
  try {
    let archivePath = source.kind === "upload" ? path.join(staging, "upload") : source.path;
    if (source.kind === "upload") {
      if (source.bytes.length > AGENT_CODE_LIMITS.maxArchiveBytes)
        throw agentCodeRefused([
          refusal("ARCHIVE_TOO_LARGE", `${source.bytes.length} bytes, limit ${AGENT_CODE_LIMITS.maxArchiveBytes}`),
        ]);
      await fs.writeFile(archivePath, source.bytes, { mode: 0o600, flag: "wx" });
    }
    if (source.kind === "directory") {
      archivePath = path.join(staging, "code.tar");
      const packed = await packAgentDirectory({
        directory: source.path,
        destPath: archivePath,
        limits: AGENT_CODE_LIMITS,
      });
      if (packed.kind === "refused") throw agentCodeRefused(packed.reasons);
    }
    const spoolPath = path.join(staging, "spool");
    const verdict = await validateArchive({ archivePath, limits: AGENT_CODE_LIMITS, spoolPath });
    if (verdict.kind === "refused") throw agentCodeRefused(verdict.reasons);
    const lockfile = await pickAgentLockfile(verdict.entries, spoolPath);
    const stored = await createFsArtifactStore({ rootDir: defaultArtifactRoot(deps.dataDir) }).putFile({
      filePath: archivePath,
      expectedDigest: verdict.archive.sha256,
    });
    await recordArtifact(deps.db, { ...stored, kind: "agent-code" });
    return {
      digest: stored.digest,
      bytes: stored.sizeBytes,
      dependencies: dependenciesOf(lockfile),
    };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

/**
 * Code an earlier upload stored, named by a digest the client sends back: it must name an artifact
 * recorded as agent code (any other digest, of another kind or of nothing, is VALIDATION_FAILED —
 * one message for both, so the answer says nothing about other artifacts). The facts a version
 * records are not taken from the client: the size is the artifact row's, and the lockfile is
 * found again in the stored bytes (read back verified against the digest, validated again under
 * today's limits).
 */
async function recallStoredAgentCode(deps: { db: Db; dataDir: string }, digest: string): Promise<TStoredAgentCode> {
  const row = ZSHA256_HEX.test(digest) ? await deps.db.artifact.findUnique({ where: { digest } }) : null;
  if (row?.kind !== "agent-code")
    throw new AppError("VALIDATION_FAILED", "No agent code is stored under that digest; upload the archive again.", {
      fieldErrors: { codeDigest: ["not agent code stored here; choose the file again"] },
    });
  await fs.mkdir(path.join(deps.dataDir, "staging"), { recursive: true });
  const staging = await fs.mkdtemp(path.join(deps.dataDir, "staging", "agent-code-"));
  try {
    const archivePath = path.join(staging, "code");
    const read = await createFsArtifactStore({ rootDir: defaultArtifactRoot(deps.dataDir) }).readToFile({
      digest,
      destPath: archivePath,
    });
    const lockfile = await readAgentCodeLockfile({ archivePath, limits: AGENT_CODE_LIMITS });
    return {
      digest,
      bytes: read.sizeBytes,
      dependencies: dependenciesOf(lockfile),
    };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

/** The stored code's bytes, verified against their digest on the way out (for the upload into a guest). */
export async function readAgentCode(deps: { dataDir: string }, digest: string): Promise<Buffer> {
  await fs.mkdir(path.join(deps.dataDir, "staging"), { recursive: true });
  const staging = await fs.mkdtemp(path.join(deps.dataDir, "staging", "agent-code-"));
  try {
    const destPath = path.join(staging, "code");
    await createFsArtifactStore({ rootDir: defaultArtifactRoot(deps.dataDir) }).readToFile({ digest, destPath });
    return await fs.readFile(destPath);
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}

function dependenciesOf(lockfile: Awaited<ReturnType<typeof readAgentCodeLockfile>>): TStoredAgentCode["dependencies"] {
  return lockfile.kind === "found"
    ? { recipe: lockfile.recipeKind, lockfileDigest: lockfile.inputs.lockfileDigest }
    : null;
}
