import { createBackup } from "../../../lib/backup/create-backup";
import { assertDataDirEmpty, restoreBackup } from "../../../lib/backup/restore-backup";
import { openDatabase } from "../../../lib/db/open-database";
import { formatBytes, formatDateTime, formatSeconds } from "../../../lib/format/format";
import { parseCommandArgs, withDatabase, type Command } from "../context";
import { printResult, UsageError } from "../output";

export const backupCreate: Command = {
  summary:
    "write one consistent archive of the database, artifacts, candidates and mirrors (works while the system runs)",
  usage: "backup create --out FILE [--include-secrets] [--json]",
  example: "schoolcore backup create --out /backups/school-core-$(date +%F).tar.gz",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, {
      out: { type: "string" },
      "include-secrets": { type: "boolean" },
    });
    if (!values.out) throw new UsageError("--out FILE is required");
    const result = await withDatabase(
      context,
      ({ handle }) =>
        createBackup(
          { databaseUrl: handle.url, dataDir: context.env.dataDir },
          { outFile: values.out!, isSecretsIncluded: values["include-secrets"] === true },
        ),
      false,
    );
    const rows = result.manifest.tables.reduce((n, t) => n + t.rows, 0);
    printResult(
      context.isJson,
      {
        file: result.file,
        bytes: result.bytes,
        seconds: result.seconds,
        rows,
        snapshotAt: result.manifest.snapshotAt,
        dataEntries: result.manifest.dataEntries,
        secretsIncluded: result.manifest.secretsIncluded,
        secretsToReprovide: result.manifest.secretsToReprovide,
        keyFile: result.keyFile,
        keyId: result.keyId,
        warnings: result.warnings,
      },
      () =>
        [
          `wrote ${result.file} (${formatBytes(result.bytes)}, ${rows} rows, snapshot at ${formatDateTime(result.manifest.snapshotAt, { precision: "second" })}) in ${formatSeconds(result.seconds)}`,
          `files: ${result.manifest.dataEntries.join(", ") || "none"}`,
          result.manifest.secretsIncluded
            ? "secrets included: keep this file as safe as the server"
            : `secrets NOT included; after a restore provide again: ${result.manifest.secretsToReprovide.join(", ") || "nothing"}`,
          `sealed with the backup key ${result.keyFile} (id ${result.keyId}), which is NOT in the archive: keep a copy of it apart from the backups; restoring needs it (backup restore FILE --key-file KEY)`,
          ...result.warnings.map((w) => `warning: ${w}`),
        ].join("\n"),
    );
  },
};

export const backupRestore: Command = {
  summary:
    "restore a backup into an empty DATA_DIR (and an empty database); refuses anything non-empty, and any archive its backup key does not authenticate",
  usage: "backup restore FILE --key-file KEY [--json]",
  example: "schoolcore backup restore /backups/school-core-2026-12-01.tar.gz --key-file /safe/backup-key",
  async run(context) {
    const { positionals, values } = parseCommandArgs(context.argv, { "key-file": { type: "string" } }, true);
    if (positionals.length !== 1) throw new UsageError("exactly one backup file is required");
    if (!values["key-file"])
      throw new UsageError(
        "--key-file KEY is required: the backup key of the installation that made the backup (its DATA_DIR/secrets/backup-key)",
      );
    // Checked before the database is opened: the embedded server would create DATA_DIR/postgres.
    await assertDataDirEmpty(context.env.dataDir);
    const result = await restoreBackup(
      {
        dataDir: context.env.dataDir,
        openDatabase: async () => {
          const open = await openDatabase(context.env, { migrate: false });
          return { url: open.handle.url, close: open.close };
        },
      },
      { file: positionals[0]!, keyFile: values["key-file"] },
    );
    printResult(
      context.isJson,
      {
        dataDir: result.dataDir,
        seconds: result.seconds,
        rows: result.rows,
        snapshotAt: result.manifest.snapshotAt,
        secretsToReprovide: result.manifest.secretsToReprovide,
        migrationsAppliedAfter: result.migrationsAppliedAfter,
      },
      () =>
        [
          `restored ${result.rows} rows and ${result.manifest.dataEntries.join(", ") || "no files"} into ${result.dataDir} in ${formatSeconds(result.seconds)} (state as of ${formatDateTime(result.manifest.snapshotAt, { precision: "second" })})`,
          result.manifest.secretsToReprovide.length > 0
            ? `provide again before starting: ${result.manifest.secretsToReprovide.join(", ")} (npm start creates fresh local tokens and demo logins are not restored)`
            : "",
        ]
          .filter(Boolean)
          .join("\n"),
    );
  },
};
