import { resolveDatabase } from "../../../lib/db/database-url";
import { diffDatabaseToSchema, readMigrationStatus, writeNextMigration } from "../../../lib/db/migrations";
import { AppError } from "../../../lib/errors";
import { parseCommandArgs, withDatabase, type Command } from "../context";
import { printResult, UsageError } from "../output";

export const dbMigrate: Command = {
  summary: "apply pending migrations",
  usage: "db migrate [--json]",
  example: "schoolcore db migrate",
  async run(context) {
    parseCommandArgs(context.argv, {});
    const applied = await withDatabase(context, async (open) => open.appliedMigrations);
    printResult(context.isJson, { applied }, () =>
      applied.length ? `applied: ${applied.join(", ")}` : "database is up to date",
    );
  },
};

export const dbStatus: Command = {
  summary: "show applied and pending migrations, and drift from schema.prisma",
  usage: "db status [--json]",
  example: "schoolcore db status --json",
  async run(context) {
    parseCommandArgs(context.argv, {});
    const result = await withDatabase(
      context,
      async ({ handle }) => {
        const status = await readMigrationStatus(handle.url);
        const drift = status.pending.length === 0 ? await diffDatabaseToSchema(handle.url) : [];
        return { ...status, drift, embedded: handle.isEmbedded };
      },
      false,
    );
    printResult(context.isJson, result, () =>
      [
        `database: ${result.embedded ? "embedded" : "DATABASE_URL"}`,
        `applied: ${result.applied.length}`,
        `pending: ${result.pending.length ? result.pending.join(", ") : "none"}`,
        `failed: ${result.failed.length ? result.failed.join(", ") : "none"}`,
        `drift from schema.prisma: ${result.drift.length ? `\n  ${result.drift.join("\n  ")}` : "none"}`,
      ].join("\n"),
    );
    if (result.pending.length || result.failed.length || result.drift.length) process.exitCode = 1;
  },
};

export const dbDiff: Command = {
  summary: "write the next migration from schema.prisma",
  usage: "db diff NAME [--json]",
  example: "schoolcore db diff add-attempt-groups   # after editing prisma/schema.prisma",
  async run(context) {
    const { positionals } = parseCommandArgs(context.argv, {}, true);
    const name = positionals[0];
    if (!name) throw new UsageError("a migration name is required: db diff NAME");
    const handle = await resolveDatabase(context.env);
    try {
      const written = await writeNextMigration(name, handle.url);
      printResult(context.isJson, written ?? { dir: null }, () =>
        written ? `wrote ${written.dir}/migration.sql` : "schema.prisma has no changes since the last migration",
      );
    } catch (error) {
      throw error instanceof AppError ? error : new AppError("INTERNAL", `db diff failed: ${(error as Error).message}`);
    } finally {
      await handle.stop();
    }
  },
};
