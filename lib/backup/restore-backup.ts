/**
 * `schoolcore backup restore`: a backup into an empty DATA_DIR and an empty database.
 *
 * Fails closed at every step, and nothing is written to DATA_DIR or the database until the whole
 * archive has been read and judged (issue 27: a restore used to extract whatever the file held and
 * then start the PostgreSQL cluster it found there). In order:
 * - a non-empty DATA_DIR is refused (a restore never merges with, or overwrites, an installation);
 * - the archive is copied into a private directory (so the bytes checked are the bytes extracted)
 *   and read once writing nothing: its seal must verify under the key the operator hands over
 *   (--key-file; it never travels inside the archive), else BACKUP_UNAUTHENTIC; then every entry
 *   must be a directory or regular file the authenticated manifest lists and a backup of its kind
 *   can hold (classifyBackupEntry), else BACKUP_ENTRY_REFUSED; a backup from a version with
 *   migrations this one does not know is BACKUP_INVALID;
 * - only then is it extracted, by our own reader (directories 0700, files owner-only): the data
 *   parts into DATA_DIR, the manifest and snapshot into the private directory, which the database
 *   load reads and which is removed after. The load is one transaction, into the database the
 *   caller opens (embedded under the new DATA_DIR, or DATABASE_URL) once the files are in place.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { AppError } from "../errors";
import { applyMigrations, loadMigrationList } from "../db/migrations";
import {
  BACKUP_KEY_PATH,
  BACKUP_MANIFEST_FILE,
  classifyBackupEntry,
  ZBackupManifestSchema,
  type TBackupManifest,
} from "./backup-manifest";
import { readBackupKey, readSealedArchive, type TBackupKey } from "./backup-seal";
import { BackupTarReader, type TBackupEntry, type TEntryWriter } from "./backup-tar-reader";
import { assertDatabaseEmpty, importDatabaseSnapshot } from "./database-snapshot";

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

const MAX_MANIFEST_BYTES = 16 << 20;

function parseManifest(file: string, bytes: Buffer | null): TBackupManifest {
  if (!bytes)
    throw new AppError(
      "BACKUP_INVALID",
      `${path.basename(file)} is not a School-Core backup (no ${BACKUP_MANIFEST_FILE}).`,
    );
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new AppError("BACKUP_INVALID", `${BACKUP_MANIFEST_FILE} in ${path.basename(file)} is not JSON.`);
  }
  const parsed = ZBackupManifestSchema.safeParse(json);
  if (!parsed.success)
    throw new AppError(
      "BACKUP_INVALID",
      `${BACKUP_MANIFEST_FILE} in ${path.basename(file)} is not a backup manifest this version reads.`,
    );
  return parsed.data;
}

/** Reads the whole sealed archive, writing nothing: its seal, its manifest, and every entry against that manifest. */
async function checkBackupArchive(file: string, key: TBackupKey): Promise<TBackupManifest> {
  const entries: TBackupEntry[] = [];
  let manifestBytes: Buffer | null = null;
  const reader = new BackupTarReader((entry) => {
    entries.push(entry);
    if (entry.kind !== "file" || entry.path !== BACKUP_MANIFEST_FILE || entry.size > MAX_MANIFEST_BYTES)
      return undefined;
    const chunks: Buffer[] = [];
    return {
      write: (chunk) => void chunks.push(Buffer.from(chunk)),
      end: () => void (manifestBytes = Buffer.concat(chunks)),
    };
  });
  // The seal is judged first: what an unauthenticated archive holds is not worth a word.
  await readSealedArchive({ file, key, onTarChunk: (chunk) => reader.push(chunk) });
  reader.finish();
  if (reader.refusals.length > 0)
    throw new AppError(
      "BACKUP_ENTRY_REFUSED",
      `The backup holds ${reader.refusals.slice(0, 5).join("; ")}; nothing was restored.`,
    );
  const manifest = parseManifest(file, manifestBytes);
  const refused = entries
    .map((e) => classifyBackupEntry(manifest, e))
    .flatMap((c) => (c.kind === "refused" ? [c.reason] : []));
  if (refused.length > 0)
    throw new AppError(
      "BACKUP_ENTRY_REFUSED",
      `The backup holds what a backup of its kind cannot: ${refused.slice(0, 5).join("; ")}; nothing was restored.`,
    );
  return manifest;
}

/** Extracts the checked archive: data parts under dataDir, the manifest and snapshot under metaRoot. */
async function extractBackupArchive(input: {
  file: string;
  key: TBackupKey;
  manifest: TBackupManifest;
  dataDir: string;
  metaRoot: string;
}) {
  const reader = new BackupTarReader(async (entry): Promise<TEntryWriter | undefined> => {
    const verdict = classifyBackupEntry(input.manifest, entry);
    // Checked in full before; a difference now means the private copy changed under us.
    if (verdict.kind === "refused") throw new AppError("BACKUP_ENTRY_REFUSED", verdict.reason);
    const target = path.join(verdict.kind === "meta" ? input.metaRoot : input.dataDir, entry.path);
    if (entry.kind === "dir") {
      await fs.mkdir(target, { recursive: true, mode: 0o700 });
      return undefined;
    }
    await fs.mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    // wx: a path is written once and never through anything already there.
    const handle = await fs.open(target, "wx", 0o600 | (entry.mode & 0o100));
    return {
      write: async (chunk) => void (await handle.write(chunk)),
      end: () => handle.close(),
    };
  });
  await readSealedArchive({ file: input.file, key: input.key, onTarChunk: (chunk) => reader.push(chunk) });
  reader.finish();
  if (reader.refusals.length > 0) throw new AppError("BACKUP_ENTRY_REFUSED", reader.refusals[0]!);
}

export async function restoreBackup(
  deps: TRestoreDeps,
  input: { file: string; keyFile: string },
): Promise<TRestoreBackupResult> {
  const started = performance.now();
  const dataDir = path.resolve(deps.dataDir);
  await assertDataDirEmpty(dataDir);
  const key = await readBackupKey(input.keyFile);
  const privateDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-restore-"));
  try {
    const copy = path.join(privateDir, "backup.tar.gz");
    await fs.copyFile(input.file, copy).catch((error: Error) => {
      throw new AppError("BACKUP_INVALID", `${input.file} cannot be read: ${error.message}`);
    });
    const manifest = await checkBackupArchive(copy, key);
    const known = new Set((await loadMigrationList()).migrationDirectories.map((m) => m.path));
    const unknown = manifest.migrations.filter((m) => !known.has(m));
    if (unknown.length > 0)
      throw new AppError(
        "BACKUP_INVALID",
        `The backup was taken by a newer School-Core (migration ${unknown[0]} is unknown here). Restore with that version or newer.`,
      );

    await fs.mkdir(dataDir, { recursive: true, mode: 0o711 });
    const metaRoot = path.join(privateDir, "meta");
    await extractBackupArchive({ file: copy, key, manifest, dataDir, metaRoot });
    // The key came from outside; keeping it lets this installation's next backups use the same one.
    await fs.mkdir(path.join(dataDir, path.dirname(BACKUP_KEY_PATH)), { recursive: true, mode: 0o700 });
    await fs.writeFile(path.join(dataDir, BACKUP_KEY_PATH), `${key.key.toString("utf8")}\n`, {
      mode: 0o600,
      flag: "wx",
    });

    const database = await deps.openDatabase();
    try {
      await assertDatabaseEmpty(database.url);
      // The rows go into the schema they were taken from; the migrations the backup predates run
      // after them, so a migration that moves data (e.g. guest_round_reports) moves the restored rows too.
      await applyMigrations(database.url, undefined, { only: manifest.migrations });
      const { rows } = await importDatabaseSnapshot({
        databaseUrl: database.url,
        fromDir: metaRoot,
        tables: manifest.tables,
      });
      const migrationsAppliedAfter = await applyMigrations(database.url);
      return {
        dataDir,
        seconds: Math.round((performance.now() - started) / 100) / 10,
        rows,
        manifest,
        migrationsAppliedAfter,
      };
    } finally {
      await database.close();
    }
  } finally {
    await fs.rm(privateDir, { recursive: true, force: true });
  }
}
