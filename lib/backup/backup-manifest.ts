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
    dataEntries: z.array(z.string()),
    secretsIncluded: z.boolean(),
    /** secrets that existed but were left out: the operator provides them again after a restore */
    secretsToReprovide: z.array(z.string()),
  })
  .strict();
export type TBackupManifest = z.infer<typeof ZBackupManifestSchema>;
export type TBackupTable = z.infer<typeof ZBackupTableSchema>;
