/**
 * A database as a School-Core from before migration guest_round_reports left it, for the tests of
 * that migration and of restoring an older backup: migrated (through applyMigrations) to the step
 * before, with tasks whose guest report still sits on the task row.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { applyMigrations, loadMigrationList } from "../migrations";

export type TLegacyTask = { round: number; guestReport: object | null };

/** Migrates the empty database at `url` to the step before guest_round_reports and inserts `tasks`; returns their ids and the migration names either side. */
export async function createDatabaseBeforeGuestRoundReports(
  url: string,
  tasks: readonly TLegacyTask[],
): Promise<{ taskIds: string[]; before: string[]; fromGuestRoundReports: string[] }> {
  const names = (await loadMigrationList()).migrationDirectories.map((m) => m.path);
  const at = names.findIndex((n) => n.endsWith("_guest_round_reports"));
  if (at <= 0) throw new Error("migration guest_round_reports not found");
  const before = names.slice(0, at);
  await applyMigrations(url, undefined, { only: before });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const repositoryId = randomUUID();
    await client.query(
      `insert into "TargetRepository" ("id", "name", "cloneUrl") values ($1, 'demo/legacy', 'file:///x')`,
      [repositoryId],
    );
    const taskIds: string[] = [];
    for (const task of tasks) {
      const id = randomUUID();
      await client.query(
        `insert into "Task" ("id", "repositoryId", "issueNumber", "issueTitle", "prompt", "baseRef", "baseSha", "operationId", "limits", "round", "guestReport", "updatedAt")
         values ($1, $2, 1, 't', 'p', 'main', $3, $4, '{}', $5, $6, now())`,
        [
          id,
          repositoryId,
          "a".repeat(40),
          randomUUID(),
          task.round,
          task.guestReport === null ? null : JSON.stringify(task.guestReport),
        ],
      );
      taskIds.push(id);
    }
    return { taskIds, before, fromGuestRoundReports: names.slice(at) };
  } finally {
    await client.end();
  }
}
