/**
 * The one Prisma client. Built lazily because the embedded database's URL is only known after
 * it has been found or started; cached on globalThis so dev reloads and tests reuse one pool.
 * Secrets (password hashes, relay handle hashes) are omitted by default: reading one needs an
 * explicit `omit: { passwordHash: false }` at the single place that verifies it.
 */
import { PrismaPg } from "@prisma/adapter-pg";
import pg from "pg";
import { getEnv } from "../env";
import { resolveDatabase, type DatabaseHandle } from "./database-url";
import { PrismaClient } from "./generated/client";

/**
 * The pg pool under each client (see pgPoolOf). Kept on globalThis like the client itself: Next
 * can load this module more than once in one server process (one copy per bundle), and a client
 * built by one copy must find its pool from another.
 */
const globalForPools = globalThis as unknown as { schoolCorePoolOfClient?: WeakMap<object, pg.Pool> };
const poolOfClient = (globalForPools.schoolCorePoolOfClient ??= new WeakMap<object, pg.Pool>());

function buildClient(url: string) {
  const pool = new pg.Pool({ connectionString: url, max: 10 });
  const client = new PrismaClient({
    adapter: new PrismaPg(pool, { disposeExternalPool: true }),
    omit: { user: { passwordHash: true }, relayCapability: { handleHash: true } },
  });
  poolOfClient.set(client, pool);
  return client;
}

export type Db = ReturnType<typeof buildClient>;

/**
 * The node-postgres pool a client runs on (the same connections, the same limit). Only where
 * Prisma cannot do the job: the relay's admission and settlement, where Prisma's per-query work
 * was several times the statement's own CPU (issue 16), and session-level advisory locks, which
 * need one connection held across statements (lib/db/session-lock.ts); everything else goes
 * through Prisma.
 */
export function pgPoolOf(db: Db): pg.Pool {
  const pool = poolOfClient.get(db);
  if (!pool) throw new Error("this database client was not built by lib/db/client.ts");
  return pool;
}
/** A transaction client, for functions that must run inside a caller's transaction. */
export type DbTx = Parameters<Parameters<Db["$transaction"]>[0]>[0];

type DbState = { client: Promise<Db>; handle: Promise<DatabaseHandle> };
const globalForDb = globalThis as unknown as { schoolCoreDb?: DbState };

/** The process-wide client; the first call finds (or starts) the database. */
export function getDb(): Promise<Db> {
  if (!globalForDb.schoolCoreDb) {
    const handle = resolveDatabase(getEnv());
    const state: DbState = { handle, client: handle.then((h) => buildClient(h.url)) };
    // A failed first attempt must not poison the process forever.
    state.client.catch(() => {
      if (globalForDb.schoolCoreDb === state) globalForDb.schoolCoreDb = undefined;
    });
    globalForDb.schoolCoreDb = state;
  }
  return globalForDb.schoolCoreDb.client;
}

/** Connects a client to an explicit URL (tests, CLI against a chosen database). */
export function createDb(url: string): Db {
  return buildClient(url);
}

/** Installs a client as the process-wide one (tests and entry points that already hold a URL). */
export function setDb(db: Db, handle?: DatabaseHandle): void {
  globalForDb.schoolCoreDb = {
    client: Promise.resolve(db),
    handle: Promise.resolve(handle ?? { url: "", isEmbedded: false, isOwned: false, stop: async () => undefined }),
  };
}

export async function closeDb(): Promise<void> {
  const state = globalForDb.schoolCoreDb;
  if (!state) return;
  globalForDb.schoolCoreDb = undefined;
  await (await state.client.catch(() => undefined))?.$disconnect();
  await (await state.handle.catch(() => undefined))?.stop();
}
