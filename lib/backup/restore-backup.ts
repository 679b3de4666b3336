/**
 * `schoolcore backup restore`: a backup into an empty DATA_DIR and an empty database.
 *
 * Fails closed at every step: a non-empty DATA_DIR or a database with rows is refused before
 * anything is written (a restore never merges with, or overwrites, a live installation); an
 * archive that is not a School-Core backup, or that was taken by a version with migrations this
 * one does not know, is refused before extraction; the database load is one transaction.
 * The database is opened by the caller (embedded under the new DATA_DIR, or DATABASE_URL) after
 * the files are in place, because the embedded server lives inside DATA_DIR.
 */
import { execFile } from "node:child_process";
import fs from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { AppError } from "../errors";
import { applyMigrations, loadMigrationList } from "../db/migrations";
import { BACKUP_META_DIR, ZBackupManifestSchema, BACKUP_MANIFEST_FILE, type TBackupManifest } from "./backup-manifest";
import { assertDatabaseEmpty, importDatabaseSnapshot } from "./database-snapshot";

const run = promisify(execFile);

export type TRestoreBackupResult = {
  dataDir: string;
  seconds: number;
  rows: number;
  manifest: TBackupManifest;
  migrationsAppliedAfter: string[];
};

export type TRestoreDeps = {
  dataDir: string;
  /** Opens (starting if embedded) the target database once the files are in place. */
  openDatabase(): Promise<{ url: string; close(): Promise<void> }>;
};

export async function assertDataDirEmpty(dataDir: string): Promise<void> {
  const entries = await fs.readdir(dataDir).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [];
    throw error;
  });
  if (entries.length > 0)
    throw new AppError(
      "STATE_CONFLICT",
      `DATA_DIR ${dataDir} is not empty (${entries.slice(0, 3).join(", ")}…). A backup is restored only into an empty directory.`,
    );
}

export async function readBackupManifest(file: string): Promise<TBackupManifest> {
  let text: string;
  try {
    ({ stdout: text } = await run("tar", ["--extract", "--gzip", "--file", file, "--to-stdout", BACKUP_MANIFEST_FILE], {
      maxBuffer: 64 << 20,
    }));
  } catch {
    throw new AppError("BACKUP_INVALID", `${path.basename(file)} is not a School-Core backup (no readable ${BACKUP_MANIFEST_FILE}).`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new AppError("BACKUP_INVALID", `${BACKUP_MANIFEST_FILE} in ${path.basename(file)} is not JSON.`);
  }
  const parsed = ZBackupManifestSchema.safeParse(json);
  if (!parsed.success)
    throw new AppError("BACKUP_INVALID", `${BACKUP_MANIFEST_FILE} in ${path.basename(file)} is not a backup manifest this version reads.`);
  return parsed.data;
}

export async function restoreBackup(deps: TRestoreDeps, input: { file: string }): Promise<TRestoreBackupResult> {
  const started = performance.now();
  const dataDir = path.resolve(deps.dataDir);
  await assertDataDirEmpty(dataDir);
  const manifest = await readBackupManifest(input.file);
  const known = new Set((await loadMigrationList()).migrationDirectories.map((m) => m.path));
  const unknown = manifest.migrations.filter((m) => !known.has(m));
  if (unknown.length > 0)
    throw new AppError(
      "BACKUP_INVALID",
      `The backup was taken by a newer School-Core (migration ${unknown[0]} is unknown here). Restore with that version or newer.`,
    );

  await fs.mkdir(dataDir, { recursive: true, mode: 0o711 });
  try {
    await run("tar", ["--extract", "--gzip", "--file", input.file, "--directory", dataDir, "--no-same-owner"], { maxBuffer: 16 << 20 });
  } catch (error) {
    throw new AppError(
      "BACKUP_INVALID",
      `Extracting the backup failed: ${((error as { stderr?: string }).stderr ?? String(error)).slice(0, 500)}`,
    );
  }

  const database = await deps.openDatabase();
  try {
    await assertDatabaseEmpty(database.url);
    // The rows go into the schema they were taken from; the migrations the backup predates run
    // after them, so a migration that moves data (e.g. guest_round_reports) moves the restored rows too.
    await applyMigrations(database.url, undefined, { only: manifest.migrations });
    const { rows } = await importDatabaseSnapshot({ databaseUrl: database.url, fromDir: dataDir, tables: manifest.tables });
    const migrationsAppliedAfter = await applyMigrations(database.url);
    await fs.rm(path.join(dataDir, BACKUP_META_DIR), { recursive: true, force: true });
    return { dataDir, seconds: Math.round((performance.now() - started) / 100) / 10, rows, manifest, migrationsAppliedAfter };
  } finally {
    await database.close();
  }
}
