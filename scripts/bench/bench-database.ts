/**
 * A fresh, migrated database for one benchmark run: DATABASE_URL's server when set, else an
 * embedded PostgreSQL in a temporary directory (whose postmaster pid is passed on, so a bench can
 * account the server's CPU). Everything is removed afterwards.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { createDb, type Db } from "../../lib/db/client";
import { startEmbeddedPostgres } from "../../lib/db/embedded-postgres";
import { applyMigrations } from "../../lib/db/migrations";
import { findFreePort } from "../../lib/testing/free-port";

export async function withBenchDatabase<T>(
  prefix: string,
  body: (db: Db, url: string, server: { postmasterPid: number | null }) => Promise<T>,
): Promise<T> {
  const cleanups: (() => Promise<void>)[] = [];
  try {
    let baseUrl = process.env.DATABASE_URL;
    let postmasterPid: number | null = null;
    if (!baseUrl) {
      const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), `${prefix}-pg-`));
      await fs.chmod(dataDir, 0o755);
      const server = await startEmbeddedPostgres({ dataDir, port: await findFreePort() });
      baseUrl = server.url;
      postmasterPid =
        Number((await fs.readFile(path.join(dataDir, "postgres", "postmaster.pid"), "utf8")).split("\n")[0]) || null;
      cleanups.push(async () => {
        await server.stop();
        await fs.rm(dataDir, { recursive: true, force: true });
      });
    }
    const name = `${prefix.replace(/-/g, "_")}_${randomBytes(4).toString("hex")}`;
    const adminUrl = new URL(baseUrl);
    adminUrl.pathname = "/postgres";
    const admin = new pg.Client({ connectionString: adminUrl.toString() });
    await admin.connect();
    await admin.query(`create database ${name}`);
    cleanups.push(async () => {
      await admin.query(`drop database if exists ${name} with (force)`).catch(() => undefined);
      await admin.end();
    });
    const url = new URL(baseUrl);
    url.pathname = `/${name}`;
    await applyMigrations(url.toString());
    const db = createDb(url.toString());
    cleanups.push(() => db.$disconnect());
    return await body(db, url.toString(), { postmasterPid });
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}
