/**
 * Where the database is: DATABASE_URL when set, otherwise the embedded server under DATA_DIR
 * (reused when already running, started otherwise).
 */
import type { TEnv } from "../env";
import { startEmbeddedPostgres } from "./embedded-postgres";

export type DatabaseHandle = { url: string; isEmbedded: boolean; isOwned: boolean; stop(): Promise<void> };

/** `isAdopting`: the caller owns DATA_DIR (`npm start`) and stops an embedded server it found running, too. */
export async function resolveDatabase(
  env: TEnv,
  log?: (line: string) => void,
  options: { isAdopting?: boolean } = {},
): Promise<DatabaseHandle> {
  if (env.DATABASE_URL)
    return { url: env.DATABASE_URL, isEmbedded: false, isOwned: false, stop: async () => undefined };
  const server = await startEmbeddedPostgres({
    dataDir: env.dataDir,
    port: env.EMBEDDED_PG_PORT,
    log,
    isAdopting: options.isAdopting,
  });
  return { url: server.url, isEmbedded: true, isOwned: server.isOwned, stop: server.stop };
}
