/**
 * A database as a School-Core from before migration runs_kernel left it — the setup run's and the
 * build request's state still plain text — for the test of that migration: migrated (through
 * applyMigrations) to the step before, with one setup run and one build request per given state.
 */
import { randomUUID } from "node:crypto";
import pg from "pg";
import { applyMigrations, loadMigrationList } from "../../db/migrations";

export type TLegacyRun = { state: string; heartbeatAt: Date | null; startedAt: Date };

export type TLegacyRuns = { setupRunIds: string[]; requestIds: string[]; before: string[]; runsKernel: string };

/** Migrates the empty database at `url` to the step before runs_kernel and inserts `runs` into both tables. */
export async function createDatabaseBeforeRunsKernel(url: string, runs: readonly TLegacyRun[]): Promise<TLegacyRuns> {
  const names = (await loadMigrationList()).migrationDirectories.map((m) => m.path);
  const at = names.findIndex((n) => n.endsWith("_runs_kernel"));
  if (at <= 0) throw new Error("migration runs_kernel not found");
  const before = names.slice(0, at);
  await applyMigrations(url, undefined, { only: before });
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const repositoryId = randomUUID();
    await client.query(
      `insert into "TargetRepository" ("id", "name", "cloneUrl") values ($1, 'demo/legacy-runs', 'file:///x')`,
      [repositoryId],
    );
    const setupRunIds: string[] = [];
    const requestIds: string[] = [];
    for (const run of runs) {
      const setupRunId = randomUUID();
      await client.query(
        `insert into "DependencySetupRun" ("id", "repositoryId", "state", "reason", "sourceSha", "recipe", "recipeDigest", "lockfileDigest", "imageDigest", "startedAt", "heartbeatAt")
         values ($1, $2, $3, 'legacy', $4, '{}', 'r', 'l', 'i', $5, $6)`,
        [setupRunId, repositoryId, run.state, "a".repeat(40), run.startedAt, run.heartbeatAt],
      );
      setupRunIds.push(setupRunId);
      const requestId = randomUUID();
      await client.query(
        `insert into "BundleBuildRequest" ("id", "repositoryId", "kind", "state", "startedAt", "heartbeatAt") values ($1, $2, 'base', $3, $4, $5)`,
        [requestId, repositoryId, run.state, run.startedAt, run.heartbeatAt],
      );
      requestIds.push(requestId);
    }
    return { setupRunIds, requestIds, before, runsKernel: names[at]! };
  } finally {
    await client.end();
  }
}
