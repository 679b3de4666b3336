/**
 * The operator-pinned transport, cached per process and keyed by the `relay.upstream` setting's
 * version. The admission statement reads that version alongside the capability (no extra round
 * trip), so a changed setting is picked up by the very next call in every process, without a
 * TTL or a notification that could arrive late. A reload happens only when the version moved.
 */
import type { Db } from "../../db/client";
import { loadRelayTransport } from "./load-transport";
import type { TRelayTransport } from "./transport";

let cached: { db: Db; version: number; dataDir: string | undefined; transport: Promise<TRelayTransport> } | undefined;

/**
 * The transport for setting version `version`. The value read on a miss is at least as new as
 * `version` (settings only move forward), so a cache entry is never older than its key.
 * A failed load is not cached: the next call tries again.
 */
export function resolveCachedTransport(db: Db, version: number, dataDir?: string): Promise<TRelayTransport> {
  if (cached?.db === db && cached.version === version && cached.dataDir === dataDir) return cached.transport;
  const transport = loadRelayTransport({ db, dataDir });
  const entry = { db, version, dataDir, transport };
  cached = entry;
  transport.catch(() => {
    if (cached === entry) cached = undefined;
  });
  return transport;
}

/** For tests that swap settings behind a version the cache already holds. */
export function clearTransportCache(): void {
  cached = undefined;
}
