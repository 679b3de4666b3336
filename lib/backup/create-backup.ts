/**
 * `schoolcore backup create`: one archive of everything durable, taken while the system runs.
 *
 * Order matters for consistency: the database snapshot is taken first, then the files are
 * copied. Every file a snapshot row refers to was written before that row committed (artifacts
 * are content-addressed and written before their row; candidate and mirror objects before the
 * candidate row), so the copied files are a superset of what the snapshot needs. Files written
 * after the snapshot are harmless extras. Git and the artifact store write by atomic rename, so
 * a file is either copied whole or not at all.
 *
 * The archive is sealed with the installation's backup key (backup-seal.ts) and written 0600,
 * exclusively, under a random temporary name, then linked into place (link(2) never replaces what
 * is there: a file or symlink that appeared meanwhile is refused, not followed or overwritten).
 * Every entry is checked on the way with the rules restore applies, so a backup restore would
 * refuse (a symlink in DATA_DIR, say) fails here, not on the day it is needed.
 */
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { AppError } from "../errors";
import { APP_VERSION } from "../version";
import {
  BACKUP_FORMAT,
  BACKUP_KEY_PATH,
  BACKUP_MANIFEST_FILE,
  classifyBackupEntry,
  BACKUP_META_DIR,
  DURABLE_DATA_ENTRIES,
  SECRET_DATA_ENTRIES,
  type TBackupManifest,
} from "./backup-manifest";
import { ensureBackupKey, writeSealedArchive } from "./backup-seal";
import { BackupTarReader } from "./backup-tar-reader";
import { exportDatabaseSnapshot } from "./database-snapshot";

export type TCreateBackupInput = { outFile: string; isSecretsIncluded: boolean };
export type TCreateBackupResult = {
  file: string;
  bytes: number;
  seconds: number;
  manifest: TBackupManifest;
  warnings: string[];
  /** the key a restore needs (--key-file); it is not in the archive */
  keyFile: string;
  keyId: string;
};

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  );
}

export async function createBackup(
  deps: { databaseUrl: string; dataDir: string; now?: () => Date },
  input: TCreateBackupInput,
): Promise<TCreateBackupResult> {
  const started = performance.now();
  const outFile = path.resolve(input.outFile);
  if (
    await fs.lstat(outFile).then(
      () => true,
      () => false,
    )
  )
    throw new AppError("STATE_CONFLICT", `${outFile} already exists; choose a new file name.`);
  if (outFile.startsWith(path.resolve(deps.dataDir) + path.sep))
    throw new AppError(
      "VALIDATION_FAILED",
      "Write the backup outside DATA_DIR (a backup inside what it backs up is lost with it).",
    );
  const key = await ensureBackupKey(deps.dataDir);
  const staging = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-backup-"));
  try {
    const snapshot = await exportDatabaseSnapshot({ databaseUrl: deps.databaseUrl, outDir: staging });
    const present = async <T extends string>(names: readonly T[]): Promise<T[]> => {
      const found = await Promise.all(names.map((n) => exists(path.join(deps.dataDir, n))));
      return names.filter((_, i) => found[i]);
    };
    const durable = await present(DURABLE_DATA_ENTRIES);
    const secrets = await present(SECRET_DATA_ENTRIES);
    const manifest: TBackupManifest = {
      format: BACKUP_FORMAT,
      createdAt: (deps.now ?? (() => new Date()))().toISOString(),
      appVersion: APP_VERSION,
      migrations: snapshot.migrations,
      snapshotAt: snapshot.snapshotAt,
      tables: snapshot.tables,
      dataEntries: input.isSecretsIncluded ? [...durable, ...secrets] : durable,
      secretsIncluded: input.isSecretsIncluded,
      secretsToReprovide: input.isSecretsIncluded ? [] : secrets,
    };
    await fs.writeFile(path.join(staging, BACKUP_MANIFEST_FILE), JSON.stringify(manifest, null, 2) + "\n", {
      mode: 0o600,
    });

    await fs.mkdir(path.dirname(outFile), { recursive: true });
    const partial = path.join(
      path.dirname(outFile),
      `.${path.basename(outFile)}.${randomBytes(8).toString("hex")}.partial`,
    );
    const args = [
      "--create",
      "--format=gnu",
      // A hard link is stored as the file it names: restore takes no links of either kind.
      "--hard-dereference",
      "--file",
      "-",
      "--warning=no-file-changed",
      "--warning=no-file-removed",
      // Never in a backup, even with --include-secrets: the seal would travel with what it seals.
      "--anchored",
      `--exclude=${BACKUP_KEY_PATH}`,
      "-C",
      staging,
      BACKUP_META_DIR,
    ];
    if (manifest.dataEntries.length > 0) args.push("-C", deps.dataDir, ...manifest.dataEntries);
    const warnings: string[] = [];
    const refusals: string[] = [];
    const reader = new BackupTarReader((entry) => {
      const verdict = classifyBackupEntry(manifest, entry);
      if (verdict.kind === "refused") refusals.push(verdict.reason);
      return undefined;
    });
    let stderr = "";
    let exit: Promise<number | null> = Promise.resolve(null);
    try {
      await writeSealedArchive({
        file: partial,
        key,
        onTarChunk: (chunk) => reader.push(chunk),
        tar: () => {
          const child = spawn("tar", args, { stdio: ["ignore", "pipe", "pipe"] });
          child.stderr.on("data", (d: Buffer) => (stderr = (stderr + d.toString()).slice(-2000)));
          exit = new Promise((resolve, reject) => {
            child.on("error", reject);
            child.on("close", resolve);
          });
          return child.stdout;
        },
      });
      const code = await exit;
      // GNU tar exits 1 when a file changed while it was read (a live system): the copy of that
      // file may be from either side of the change, which the ordering above makes harmless.
      if (code === 1) warnings.push(`files changed while they were copied: ${stderr.slice(0, 500)}`);
      else if (code !== 0) throw new AppError("INTERNAL", `tar failed: ${stderr.slice(0, 500)}`);
      reader.finish();
      const problems = [...reader.refusals, ...refusals];
      if (problems.length > 0)
        throw new AppError(
          "BACKUP_ENTRY_REFUSED",
          `DATA_DIR holds what a restore would refuse, so no backup was written: ${problems.slice(0, 5).join("; ")}`,
        );
      await fs.link(partial, outFile).catch((error: NodeJS.ErrnoException) => {
        if (error.code === "EEXIST")
          throw new AppError(
            "STATE_CONFLICT",
            `${outFile} appeared while the backup was written; choose a new file name.`,
          );
        throw error;
      });
    } finally {
      await fs.rm(partial, { force: true });
    }
    const { size } = await fs.stat(outFile);
    return {
      file: outFile,
      bytes: size,
      seconds: Math.round((performance.now() - started) / 100) / 10,
      manifest,
      warnings,
      keyFile: key.keyFile,
      keyId: key.keyId,
    };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}
