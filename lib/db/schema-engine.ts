/**
 * Prisma's own schema engine, WebAssembly build, driven through @prisma/adapter-pg. It applies
 * prisma/migrations/* and records them in the standard `_prisma_migrations` table, so the native
 * `prisma migrate deploy` stays compatible wherever it can run. (The Prisma CLI downloads a
 * native engine, which this offline machine cannot; see ARCHITECTURE.md.)
 */
import fs from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { bindMigrationAwareSqlAdapterFactory } from "@prisma/driver-adapter-utils";

type WasmModule = {
  __wbg_set_wasm(exports: WebAssembly.Exports): void;
  SchemaEngine: {
    new: (
      options: { datamodels: [string, string][] | undefined },
      log: (line: string) => void,
      adapter: object,
    ) => Promise<SchemaEngineHandle>;
  };
};

export type MigrationDirectory = {
  path: string;
  migrationFile: { path: string; content: { tag: "ok"; value: string } };
};

export type MigrationList = {
  baseDir: string;
  lockfile: { path: string; content: string | null };
  shadowDbInitScript: string;
  migrationDirectories: MigrationDirectory[];
};

type DiffTarget =
  | { tag: "empty" }
  | { tag: "schemaDatamodel"; files: { path: string; content: string }[] }
  | { tag: "schemaDatasource"; files: { path: string; content: string }[]; configDir: string };

export type SchemaEngineHandle = {
  applyMigrations(input: {
    migrationsList: MigrationList;
    filters: { externalTables: string[]; externalEnums: string[] };
  }): Promise<{ appliedMigrationNames: string[] }>;
  diff(params: {
    from: DiffTarget;
    to: DiffTarget;
    script: boolean;
    exitCode: boolean | null;
    shadowDatabaseUrl: string | null;
    filters: { externalTables: string[]; externalEnums: string[] };
  }): Promise<{ exitCode: number; stdout: string | null }>;
  free(): void;
};

export const NO_FILTERS = { externalTables: [], externalEnums: [] };

let wasmModule: Promise<WasmModule> | undefined;

async function loadWasm(): Promise<WasmModule> {
  const require = createRequire(import.meta.url);
  const bgPath = require.resolve("@prisma/schema-engine-wasm/schema_engine_bg");
  const mod = (await import(bgPath)) as WasmModule & Record<string, unknown>;
  const bytes = await fs.readFile(path.join(path.dirname(bgPath), "schema_engine_bg.wasm"));
  const { instance } = await WebAssembly.instantiate(bytes, {
    "./schema_engine_bg.js": mod as unknown as WebAssembly.ModuleImports,
  });
  mod.__wbg_set_wasm(instance.exports);
  (instance.exports.__wbindgen_start as () => void)();
  return mod;
}

/** Opens an engine bound to the database at connectionString with the given schema text. */
export async function openSchemaEngine(options: {
  connectionString: string;
  schemaPath: string;
  schemaText: string;
  log?: (line: string) => void;
}): Promise<SchemaEngineHandle> {
  wasmModule ??= loadWasm();
  const mod = await wasmModule;
  // Our own pool, ended in free(): the engine never closes its adapter's connections, and idle
  // ones would keep a CLI process alive for the pool's idle timeout.
  const pool = new pg.Pool({ connectionString: options.connectionString, max: 2 });
  const adapter = new PrismaPg(pool);
  const engine = await mod.SchemaEngine.new(
    { datamodels: [[options.schemaPath, options.schemaText]] },
    options.log ?? (() => undefined),
    bindMigrationAwareSqlAdapterFactory(adapter),
  );
  return {
    applyMigrations: (input) => engine.applyMigrations(input),
    diff: (params) => engine.diff(params),
    free: () => {
      engine.free();
      void pool.end().catch(() => undefined);
    },
  };
}
