/**
 * `schoolcore backup create`: one archive of everything durable, taken while the system runs.
 *
 * Order matters for consistency: the database snapshot is taken first, then the files are
 * copied. Every file a snapshot row refers to was written before that row committed (artifacts
 * are content-addressed and written before their row; candidate and mirror objects before the
 * candidate row), so the copied files are a superset of what the snapshot needs. Files written
 * after the snapshot are harmless extras. Git and the artifact store write by atomic rename, so
 * a file is either copied whole or not at all.
 */
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { AppError } from "../errors";
import { APP_VERSION } from "../version";
import {
  BACKUP_FORMAT,
  BACKUP_MANIFEST_FILE,
  BACKUP_META_DIR,
  DURABLE_DATA_ENTRIES,
  SECRET_DATA_ENTRIES,
  type TBackupManifest,
} from "./backup-manifest";
import { exportDatabaseSnapshot } from "./database-snapshot";

const run = promisify(execFile);

export type TCreateBackupInput = { outFile: string; isSecretsIncluded: boolean };
export type TCreateBackupResult = { file: string; bytes: number; seconds: number; manifest: TBackupManifest; warnings: string[] };

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
  if (await exists(outFile)) throw new AppError("STATE_CONFLICT", `${outFile} already exists; choose a new file name.`);
  if (outFile.startsWith(path.resolve(deps.dataDir) + path.sep))
    throw new AppError("VALIDATION_FAILED", "Write the backup outside DATA_DIR (a backup inside what it backs up is lost with it).");
  const staging = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-backup-"));
  try {
    const snapshot = await exportDatabaseSnapshot({ databaseUrl: deps.databaseUrl, outDir: staging });
    const present = async (names: readonly string[]) =>
      (await Promise.all(names.map(async (n) => ((await exists(path.join(deps.dataDir, n))) ? n : undefined)))).filter(
        (n): n is string => !!n,
      );
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
    await fs.writeFile(path.join(staging, BACKUP_MANIFEST_FILE), JSON.stringify(manifest, null, 2) + "\n", { mode: 0o600 });

    await fs.mkdir(path.dirname(outFile), { recursive: true });
    const partial = `${outFile}.partial`;
    const args = [
      "--create",
      "--gzip",
      "--file",
      partial,
      "--warning=no-file-changed",
      "--warning=no-file-removed",
      "-C",
      staging,
      BACKUP_META_DIR,
    ];
    if (manifest.dataEntries.length > 0) args.push("-C", deps.dataDir, ...manifest.dataEntries);
    const warnings: string[] = [];
    try {
      await run("tar", args, { maxBuffer: 16 << 20 });
    } catch (error) {
      // GNU tar exits 1 when a file changed while it was read (a live system): the copy of that
      // file may be from either side of the change, which the ordering above makes harmless.
      const failure = error as { code?: number; stderr?: string };
      if (failure.code !== 1) throw new AppError("INTERNAL", `tar failed: ${(failure.stderr ?? String(error)).slice(0, 500)}`);
      warnings.push(`files changed while they were copied: ${(failure.stderr ?? "").slice(0, 500)}`);
    }
    await fs.chmod(partial, 0o600);
    await fs.rename(partial, outFile);
    const { size } = await fs.stat(outFile);
    return { file: outFile, bytes: size, seconds: Math.round((performance.now() - started) / 100) / 10, manifest, warnings };
  } finally {
    await fs.rm(staging, { recursive: true, force: true });
  }
}
