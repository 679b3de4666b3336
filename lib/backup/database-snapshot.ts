/**
 * A consistent logical snapshot of the application's tables, and its load into an empty
 * database. There is no pg_dump beside the embedded PostgreSQL, and an external DATABASE_URL may
 * be any version ≥ 15, so the snapshot is plain SQL over one connection:
 *
 * - export: one REPEATABLE READ READ ONLY transaction (every table from the same instant while
 *   the system keeps running), each table streamed through a cursor as `row_to_json` lines that
 *   this process never parses (no precision loss for bigint, bytea or timestamps);
 * - import (restore-backup.ts): the migrations the backup was taken at, then every table in foreign-key order through
 *   `json_populate_recordset` (PostgreSQL converts the values back with its own input functions),
 *   in one transaction, then the serial sequences moved past the loaded ids.
 *
 * The pg-boss schema and `_prisma_migrations` are not copied: jobs are re-created by the worker's
 * sweep from task states, and the migration list travels in the manifest.
 */
import fs from "node:fs";
import fsp from "node:fs/promises";
import path from "node:path";
import readline from "node:readline";
import pg from "pg";
import { AppError } from "../errors";
import { BACKUP_DATABASE_DIR, type TBackupTable } from "./backup-manifest";

const FETCH_ROWS = 2000;
const INSERT_BATCH_ROWS = 500;
const quoteIdent = (name: string) => `"${name.replace(/"/g, '""')}"`;

async function listTables(client: pg.Client): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
     where n.nspname = current_schema() and c.relkind in ('r', 'p') and c.relname <> '_prisma_migrations' order by 1`,
  );
  return rows.map((r) => r.name);
}

async function listColumns(client: pg.Client, table: string): Promise<string[]> {
  const { rows } = await client.query<{ name: string }>(
    `select column_name as name from information_schema.columns
     where table_schema = current_schema() and table_name = $1 and is_generated = 'NEVER' order by ordinal_position`,
    [table],
  );
  return rows.map((r) => r.name);
}

export type TDatabaseSnapshot = { migrations: string[]; snapshotAt: string; tables: TBackupTable[] };

/** Writes `<outDir>/schoolcore-backup/database/<Table>.ndjson` for every table; returns what it wrote. */
export async function exportDatabaseSnapshot(input: {
  databaseUrl: string;
  outDir: string;
}): Promise<TDatabaseSnapshot> {
  const dir = path.join(input.outDir, BACKUP_DATABASE_DIR);
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  const client = new pg.Client({ connectionString: input.databaseUrl });
  await client.connect();
  try {
    await client.query("begin isolation level repeatable read read only");
    const { rows: at } = await client.query<{ now: Date }>("select now()");
    const { rows: migrationRows } = await client.query<{ name: string }>(
      `select migration_name as name from _prisma_migrations where finished_at is not null and rolled_back_at is null order by migration_name`,
    );
    const tables: TBackupTable[] = [];
    for (const name of await listTables(client)) {
      const file = `${BACKUP_DATABASE_DIR}/${name}.ndjson`;
      const out = await fsp.open(path.join(input.outDir, file), "w", 0o600);
      let rows = 0;
      try {
        await client.query(
          `declare snapshot_cursor no scroll cursor for select row_to_json(t)::text as j from ${quoteIdent(name)} t`,
        );
        for (;;) {
          const batch = await client.query<{ j: string }>(`fetch ${FETCH_ROWS} from snapshot_cursor`);
          if (batch.rows.length === 0) break;
          rows += batch.rows.length;
          await out.write(batch.rows.map((r) => r.j).join("\n") + "\n");
        }
        await client.query("close snapshot_cursor");
      } finally {
        await out.close();
      }
      tables.push({ name, columns: await listColumns(client, name), rows, file });
    }
    await client.query("commit");
    return { migrations: migrationRows.map((r) => r.name), snapshotAt: at[0]!.now.toISOString(), tables };
  } catch (error) {
    await client.query("rollback").catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}

/** Tables ordered so every table comes after the tables its foreign keys reference. */
async function foreignKeyOrder(client: pg.Client, tables: string[]): Promise<string[]> {
  const { rows } = await client.query<{ child: string; parent: string }>(
    `select c.relname as child, p.relname as parent from pg_constraint k
     join pg_class c on c.oid = k.conrelid join pg_class p on p.oid = k.confrelid
     join pg_namespace n on n.oid = c.relnamespace
     where k.contype = 'f' and n.nspname = current_schema() and c.oid <> p.oid`,
  );
  const ordered: string[] = [];
  const pending = new Set(tables);
  while (pending.size > 0) {
    const ready = [...pending].filter((t) => !rows.some((r) => r.child === t && pending.has(r.parent)));
    if (ready.length === 0)
      throw new AppError(
        "INTERNAL",
        `Cannot order the tables for a restore (foreign-key cycle among ${[...pending].join(", ")}).`,
      );
    for (const t of ready.sort()) {
      ordered.push(t);
      pending.delete(t);
    }
  }
  return ordered;
}

/** Fails closed: a restore never mixes with existing rows. */
export async function assertDatabaseEmpty(databaseUrl: string): Promise<void> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    for (const table of await listTables(client)) {
      const { rows } = await client.query(`select 1 from ${quoteIdent(table)} limit 1`);
      if (rows.length > 0)
        throw new AppError(
          "STATE_CONFLICT",
          `The target database is not empty (table ${table} has rows). Restore into an empty database.`,
        );
    }
  } finally {
    await client.end();
  }
}

async function* readBatches(file: string): AsyncGenerator<string[]> {
  const lines = readline.createInterface({
    input: fs.createReadStream(file, { encoding: "utf8" }),
    crlfDelay: Infinity,
  });
  let batch: string[] = [];
  for await (const line of lines) {
    if (!line) continue;
    batch.push(line);
    if (batch.length >= INSERT_BATCH_ROWS) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

/** Loads the snapshot into a migrated, empty database (one transaction: all or nothing). */
export async function importDatabaseSnapshot(input: {
  databaseUrl: string;
  fromDir: string;
  tables: TBackupTable[];
}): Promise<{ rows: number }> {
  const client = new pg.Client({ connectionString: input.databaseUrl });
  await client.connect();
  let total = 0;
  try {
    await client.query("begin");
    const present = new Set(await listTables(client));
    const missing = input.tables.filter((t) => !present.has(t.name));
    if (missing.length > 0)
      throw new AppError(
        "BACKUP_INVALID",
        `This School-Core version has no table ${missing[0]!.name}: restore with the version that took the backup.`,
      );
    const byName = new Map(input.tables.map((t) => [t.name, t]));
    for (const name of await foreignKeyOrder(
      client,
      input.tables.map((t) => t.name),
    )) {
      const table = byName.get(name)!;
      const columns = table.columns.map(quoteIdent).join(", ");
      let loaded = 0;
      for await (const batch of readBatches(path.join(input.fromDir, table.file))) {
        await client.query(
          `insert into ${quoteIdent(name)} (${columns}) select ${columns} from json_populate_recordset(null::${quoteIdent(name)}, $1::json)`,
          [`[${batch.join(",")}]`],
        );
        loaded += batch.length;
      }
      if (loaded !== table.rows)
        throw new AppError(
          "BACKUP_INVALID",
          `The backup's ${name} table holds ${loaded} rows, its manifest says ${table.rows}: the archive is damaged.`,
        );
      total += loaded;
      // Serial ids continue after the restored ones.
      const { rows: serials } = await client.query<{ column: string }>(
        `select column_name as column from information_schema.columns where table_schema = current_schema() and table_name = $1 and (column_default like 'nextval(%' or is_identity = 'YES')`,
        [name],
      );
      for (const { column } of serials) {
        await client.query(
          `select setval(pg_get_serial_sequence($1, $2), coalesce((select max(${quoteIdent(column)}) from ${quoteIdent(name)}), 0) + 1, false)`,
          [quoteIdent(name), column],
        );
      }
    }
    await client.query("commit");
    return { rows: total };
  } catch (error) {
    await client.query("rollback").catch(() => undefined);
    throw error;
  } finally {
    await client.end();
  }
}
