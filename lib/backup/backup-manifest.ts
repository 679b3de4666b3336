/**
 * What a School-Core backup holds and how it is laid out (issue 17; seed 000: durable control and
 * evidence state is kept apart from guest storage and covered by a backup policy).
 *
 * One gzip'd tar. At its root, the durable parts of DATA_DIR under their own names, so a restore
 * is an extraction into the new DATA_DIR; beside them `schoolcore-backup/` with this manifest and
 * the database snapshot (one NDJSON file per table), which the restore loads and then removes.
 *
 * Not in a backup, on purpose: guest storage (the local substrate's machines and images: guests
 * are disposable and rebuilt), staging and work directories, the embedded PostgreSQL's files
 * (the snapshot is logical, so it restores onto any PostgreSQL ≥ 15) and the job queue (pg-boss:
 * the worker's sweep re-creates every job from the recorded task states).
 */
import { z } from "zod";

export const BACKUP_FORMAT = "school-core-backup/1";
export const BACKUP_META_DIR = "schoolcore-backup";
export const BACKUP_MANIFEST_FILE = `${BACKUP_META_DIR}/backup.json`;
export const BACKUP_DATABASE_DIR = `${BACKUP_META_DIR}/database`;

/** Durable, not secret: the content-addressed artifact store, candidate repositories, mirrors, the local forge's repositories. */
export const DURABLE_DATA_ENTRIES = ["artifacts", "candidates", "mirrors", "forge"] as const;

/** Secrets: in a backup only with --include-secrets; otherwise listed as what to re-provide. */
export const SECRET_DATA_ENTRIES = ["secrets", "nextauth-secret", "smolcloud-token", "demo-credentials.txt"] as const;

/** The key that seals backups (backup-seal.ts). Under `secrets/`, and never in a backup, with or without secrets. */
export const BACKUP_KEY_PATH = "secrets/backup-key";

const isSecretEntry = (name: string) => (SECRET_DATA_ENTRIES as readonly string[]).includes(name);

export const ZBackupTableSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/),
    columns: z.array(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/)).min(1),
    rows: z.number().int().min(0),
    file: z.string().regex(/^schoolcore-backup\/database\/[A-Za-z0-9_]+\.ndjson$/),
  })
  .strict();

export const ZBackupManifestSchema = z
  .object({
    format: z.literal(BACKUP_FORMAT),
    createdAt: z.string(),
    appVersion: z.string(),
    /** applied Prisma migrations at snapshot time, in order */
    migrations: z.array(z.string()),
    /** the snapshot's transaction ran REPEATABLE READ: every table is from the same instant */
    snapshotAt: z.string(),
    tables: z.array(ZBackupTableSchema),
    /** the top-level parts of DATA_DIR in the archive: only the ones a backup can hold */
    dataEntries: z.array(z.enum([...DURABLE_DATA_ENTRIES, ...SECRET_DATA_ENTRIES])),
    secretsIncluded: z.boolean(),
    /** secrets that existed but were left out: the operator provides them again after a restore */
    secretsToReprovide: z.array(z.string()),
  })
  .strict()
  .refine((m) => m.secretsIncluded || !m.dataEntries.some(isSecretEntry), {
    message: "dataEntries lists a secret while secretsIncluded is false",
  });
export type TBackupManifest = z.infer<typeof ZBackupManifestSchema>;
export type TBackupTable = z.infer<typeof ZBackupTableSchema>;

export type TBackupEntryClass = { kind: "meta" } | { kind: "data" } | { kind: "refused"; reason: string };

/**
 * Where an archive entry belongs, judged against the (authenticated) manifest: the manifest and
 * the snapshot files it lists ("meta", loaded then dropped), a part of DATA_DIR the manifest lists
 * and a backup of its kind can hold ("data"), or nothing a restore writes. Fails closed: anything
 * not named here — a `postgres/` cluster above all, whose postgresql.conf can run shell commands —
 * is refused, and a secret only passes when the manifest says secrets were included.
 */
export function classifyBackupEntry(
  manifest: TBackupManifest,
  entry: { kind: "file" | "dir"; path: string },
): TBackupEntryClass {
  const refused = (reason: string): TBackupEntryClass => ({ kind: "refused", reason: `${entry.path}: ${reason}` });
  const top = entry.path.split("/")[0]!;
  if (top === BACKUP_META_DIR) {
    if (entry.kind === "dir" && (entry.path === BACKUP_META_DIR || entry.path === BACKUP_DATABASE_DIR))
      return { kind: "meta" };
    if (entry.kind === "file" && entry.path === BACKUP_MANIFEST_FILE) return { kind: "meta" };
    if (entry.kind === "file" && manifest.tables.some((t) => t.file === entry.path)) return { kind: "meta" };
    return refused("not a snapshot file its manifest lists");
  }
  if (top === "postgres")
    return refused("a database cluster; a restore loads the logical snapshot and never starts a cluster from a backup");
  if (entry.path === BACKUP_KEY_PATH) return refused("the backup key never travels inside a backup");
  const isKnown = (DURABLE_DATA_ENTRIES as readonly string[]).includes(top) || isSecretEntry(top);
  if (!isKnown) return refused("not a part of DATA_DIR a backup holds");
  if (isSecretEntry(top) && !manifest.secretsIncluded)
    return refused("a secret, while its manifest says no secrets are included");
  if (!(manifest.dataEntries as readonly string[]).includes(top)) return refused("not listed in its manifest");
  return { kind: "data" };
}
