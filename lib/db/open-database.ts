/**
 * Opening the database for an entry point (start, worker, CLI): find or start it, apply pending
 * migrations, install the process-wide client. `close` disconnects and, if this process started
 * the embedded server, stops it.
 */
import type { TEnv } from "../env";
import { createDb, setDb, type Db } from "./client";
import { resolveDatabase, type DatabaseHandle } from "./database-url";
import { applyMigrations } from "./migrations";
import { withinDeadline } from "../system/within-deadline";

const DISCONNECT_TIMEOUT_MS = 3_000;

export type OpenDatabase = { db: Db; handle: DatabaseHandle; appliedMigrations: string[]; close(): Promise<void> };

export async function openDatabase(
  env: TEnv,
  options: { migrate: boolean; log?: (line: string) => void; isAdopting?: boolean },
): Promise<OpenDatabase> {
  const handle = await resolveDatabase(env, options.log, { isAdopting: options.isAdopting });
  try {
    const appliedMigrations = options.migrate ? await applyMigrations(handle.url) : [];
    const db = createDb(handle.url);
    setDb(db, handle);
    return {
      db,
      handle,
      appliedMigrations,
      // The server stops even when the client's pool does not let go (a query still in flight).
      close: async () => {
        try {
          await withinDeadline(db.$disconnect(), DISCONNECT_TIMEOUT_MS);
        } finally {
          await handle.stop();
        }
      },
    };
  } catch (error) {
    await handle.stop();
    throw error;
  }
}
