/**
 * Applying, checking and writing migrations with the WebAssembly schema engine.
 *
 * Each migration directory keeps the schema it was generated from (`schema.prisma.snapshot`), so
 * the next migration is the engine's diff snapshot → current schema, with no shadow database.
 */
import fs from "node:fs/promises";
import path from "node:path";
import pg from "pg";
import { AppError } from "../errors";
import { NO_FILTERS, openSchemaEngine, type MigrationList } from "./schema-engine";
import { PROJECT_ROOT } from "../project-root";

export const SCHEMA_PATH = path.join(PROJECT_ROOT, "prisma", "schema.prisma");
export const MIGRATIONS_DIR = path.join(PROJECT_ROOT, "prisma", "migrations");
const SNAPSHOT_FILE = "schema.prisma.snapshot";

export async function loadMigrationList(migrationsDir = MIGRATIONS_DIR): Promise<MigrationList> {
  const entries = await fs.readdir(migrationsDir, { withFileTypes: true }).catch(() => []);
  const names = entries
    .filter((e) => e.isDirectory())
    .map((e) => e.name)
    .sort();
  const migrationDirectories = await Promise.all(
    names.map(async (name) => ({
      path: name,
      migrationFile: {
        path: "migration.sql",
        content: {
          tag: "ok" as const,
          value: await fs.readFile(path.join(migrationsDir, name, "migration.sql"), "utf8"),
        },
      },
    })),
  );
  const lockPath = path.join(migrationsDir, "migration_lock.toml");
  const lockContent = await fs.readFile(lockPath, "utf8").catch(() => null);
  return {
    baseDir: migrationsDir,
    lockfile: { path: "migration_lock.toml", content: lockContent },
    shadowDbInitScript: "",
    migrationDirectories,
  };
}

/**
 * Applies every pending migration — or, with `only`, the pending ones of those named (a restore
 * first rebuilds the schema its backup was taken at) — and returns the names applied now. Safe to
 * run concurrently: a lock serialises it.
 */
export async function applyMigrations(
  connectionString: string,
  log?: (line: string) => void,
  options: { only?: readonly string[] } = {},
): Promise<string[]> {
  const status = await readMigrationStatus(connectionString);
  const isWanted = (name: string) => !options.only || options.only.includes(name);
  if (status.pending.filter(isWanted).length === 0 && status.failed.length === 0) return [];
  const schemaText = await fs.readFile(SCHEMA_PATH, "utf8");
  const all = await loadMigrationList();
  const migrationsList = { ...all, migrationDirectories: all.migrationDirectories.filter((m) => isWanted(m.path)) };
  // Two processes migrating at once (web and worker starting together) would race on
  // _prisma_migrations; an advisory lock held on a side connection serialises them.
  const lockClient = new pg.Client({ connectionString });
  await lockClient.connect();
  try {
    await lockClient.query("select pg_advisory_lock(7345001)");
    const engine = await openSchemaEngine({ connectionString, schemaPath: SCHEMA_PATH, schemaText, log });
    try {
      const result = await engine.applyMigrations({ migrationsList, filters: NO_FILTERS });
      return result.appliedMigrationNames;
    } catch (error) {
      throw new AppError("DATABASE_UNAVAILABLE", `Applying migrations failed: ${errorText(error)}`);
    } finally {
      engine.free();
    }
  } finally {
    await lockClient.query("select pg_advisory_unlock(7345001)").catch(() => undefined);
    await lockClient.end().catch(() => undefined);
  }
}

export type MigrationStatus = { applied: string[]; pending: string[]; failed: string[] };

export async function readMigrationStatus(connectionString: string): Promise<MigrationStatus> {
  const list = await loadMigrationList();
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    const exists = await client.query("select to_regclass('_prisma_migrations') as t");
    const rows: { migration_name: string; finished_at: Date | null; rolled_back_at: Date | null }[] = exists.rows[0]?.t
      ? (await client.query("select migration_name, finished_at, rolled_back_at from _prisma_migrations")).rows
      : [];
    const applied = new Set(rows.filter((r) => r.finished_at && !r.rolled_back_at).map((r) => r.migration_name));
    const failed = rows.filter((r) => !r.finished_at && !r.rolled_back_at).map((r) => r.migration_name);
    const names = list.migrationDirectories.map((d) => d.path);
    return { applied: names.filter((n) => applied.has(n)), pending: names.filter((n) => !applied.has(n)), failed };
  } finally {
    await client.end();
  }
}

/**
 * Drift between the database that `prisma/migrations` produces and `schema.prisma`.
 *
 * The wasm engine cannot introspect a live PostgreSQL (it fails on pg_catalog's `char` type), so
 * the check builds a scratch database straight from `schema.prisma` (the engine's diff
 * empty → schema) and compares the two catalogs: enums, tables, columns, constraints and
 * indexes. Triggers that migrations add by hand (immutability guards) are not part of Prisma's
 * model and are left out. Returns human-readable differences; empty = no drift.
 */
export async function diffDatabaseToSchema(connectionString: string): Promise<string[]> {
  const schemaText = await fs.readFile(SCHEMA_PATH, "utf8");
  const engine = await openSchemaEngine({ connectionString, schemaPath: SCHEMA_PATH, schemaText });
  let sql: string;
  try {
    const files = [{ path: SCHEMA_PATH, content: schemaText }];
    const result = await engine.diff({
      from: { tag: "empty" },
      to: { tag: "schemaDatamodel", files },
      script: true,
      exitCode: null,
      shadowDatabaseUrl: null,
      filters: NO_FILTERS,
    });
    sql = result.stdout ?? "";
  } finally {
    engine.free();
  }
  const scratchName = `drift_${process.pid}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: withDatabase(connectionString, "postgres") });
  await admin.connect();
  try {
    await admin.query(`create database ${scratchName}`);
    try {
      const scratch = new pg.Client({ connectionString: withDatabase(connectionString, scratchName) });
      await scratch.connect();
      try {
        await scratch.query(sql);
        const [migrated, expected] = await Promise.all([readCatalog(connectionString), readCatalogWith(scratch)]);
        return compareCatalogs(migrated, expected);
      } finally {
        await scratch.end();
      }
    } finally {
      await admin.query(`drop database if exists ${scratchName} with (force)`);
    }
  } finally {
    await admin.end();
  }
}

function withDatabase(connectionString: string, database: string): string {
  const url = new URL(connectionString);
  url.pathname = `/${database}`;
  return url.toString();
}

const CATALOG_QUERIES = {
  enums: `select t.typname || ': ' || string_agg(e.enumlabel, ',' order by e.enumsortorder) as item
          from pg_type t join pg_enum e on e.enumtypid = t.oid join pg_namespace n on n.oid = t.typnamespace
          where n.nspname = 'public' group by t.typname`,
  columns: `select table_name || '.' || column_name || ' ' || data_type || coalesce('(' || datetime_precision || ')', '') || ' ' || udt_name
                   || case when is_nullable = 'YES' then ' null' else ' not null' end || coalesce(' default ' || column_default, '') as item
            from information_schema.columns where table_schema = 'public' and table_name <> '_prisma_migrations'`,
  constraints: `select c.conrelid::regclass::text || ' ' || c.conname || ' ' || pg_get_constraintdef(c.oid) as item
                from pg_constraint c join pg_namespace n on n.oid = c.connamespace
                where n.nspname = 'public' and c.conrelid::regclass::text <> '_prisma_migrations'`,
  indexes: `select indexdef as item from pg_indexes where schemaname = 'public' and tablename <> '_prisma_migrations'`,
} as const;

type Catalog = Record<keyof typeof CATALOG_QUERIES, Set<string>>;

async function readCatalog(connectionString: string): Promise<Catalog> {
  const client = new pg.Client({ connectionString });
  await client.connect();
  try {
    return await readCatalogWith(client);
  } finally {
    await client.end();
  }
}

async function readCatalogWith(client: pg.Client): Promise<Catalog> {
  const catalog: Partial<Catalog> = {};
  for (const [key, query] of Object.entries(CATALOG_QUERIES) as [keyof Catalog, string][]) {
    const result = await client.query<{ item: string }>(query);
    catalog[key] = new Set(result.rows.map((r) => r.item));
  }
  return catalog as Catalog;
}

function compareCatalogs(migrated: Catalog, expected: Catalog): string[] {
  const differences: string[] = [];
  for (const key of Object.keys(CATALOG_QUERIES) as (keyof Catalog)[]) {
    for (const item of expected[key])
      if (!migrated[key].has(item)) differences.push(`missing in migrated database (${key}): ${item}`);
    for (const item of migrated[key])
      if (!expected[key].has(item)) differences.push(`not in schema.prisma (${key}): ${item}`);
  }
  return differences.sort();
}

function stripEmptyMigrationComment(sql: string): string {
  return sql.replace(/^-- This is an empty migration\.\s*$/m, "").trim();
}

/** Writes prisma/migrations/<timestamp>_<name>/migration.sql from the last snapshot to the current schema. */
export async function writeNextMigration(
  name: string,
  connectionString: string,
): Promise<{ dir: string; sql: string } | undefined> {
  if (!/^[a-z0-9_]{1,60}$/.test(name))
    throw new AppError("VALIDATION_FAILED", "Migration name must be 1-60 characters of a-z, 0-9 and _.");
  const schemaText = await fs.readFile(SCHEMA_PATH, "utf8");
  const list = await loadMigrationList();
  const last = list.migrationDirectories.at(-1);
  const previous = last
    ? await fs.readFile(path.join(MIGRATIONS_DIR, last.path, SNAPSHOT_FILE), "utf8").catch(() => undefined)
    : undefined;
  if (last && previous === undefined) {
    throw new AppError(
      "CONFIG_INVALID",
      `Migration ${last.path} has no ${SNAPSHOT_FILE}; cannot compute the next diff offline.`,
    );
  }
  const engine = await openSchemaEngine({ connectionString, schemaPath: SCHEMA_PATH, schemaText });
  let sql: string;
  try {
    const result = await engine.diff({
      from:
        previous === undefined
          ? { tag: "empty" }
          : { tag: "schemaDatamodel", files: [{ path: SCHEMA_PATH, content: previous }] },
      to: { tag: "schemaDatamodel", files: [{ path: SCHEMA_PATH, content: schemaText }] },
      script: true,
      exitCode: null,
      shadowDatabaseUrl: null,
      filters: NO_FILTERS,
    });
    sql = stripEmptyMigrationComment(result.stdout ?? "");
  } finally {
    engine.free();
  }
  if (sql === "") return undefined;
  // format-check: not presentation — Prisma's migration folder stamp, YYYYMMDDHHMMSS
  const stamp = new Date().toISOString().replace(/\D/g, "").slice(0, 14);
  const dir = path.join(MIGRATIONS_DIR, `${stamp}_${name}`);
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, "migration.sql"), sql + "\n");
  await fs.writeFile(path.join(dir, SNAPSHOT_FILE), schemaText);
  const lockPath = path.join(MIGRATIONS_DIR, "migration_lock.toml");
  await fs
    .writeFile(lockPath, '# Please do not edit this file manually\nprovider = "postgresql"\n', { flag: "wx" })
    .catch(() => undefined);
  return { dir, sql };
}

function errorText(error: unknown): string {
  if (error instanceof Error) return error.message;
  try {
    return JSON.stringify(error);
  } catch {
    return String(error);
  }
}
