/**
 * Trusted manifests are versioned and immutable (a database trigger refuses updates): an edit is
 * a new version with its own sha256 digest, and every version is kept. The active manifest is the
 * newest version.
 */
import { recordAudit } from "../audit";
import { canonicalDigest } from "../canonical-json";
import { actorIdOf, type Actor } from "../contract/actor";
import { ZTrustedManifestSchema, type TTrustedManifest } from "../contract/trusted-manifest";
import type { Db, DbTx } from "../db/client";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";

export type TStoredManifest = {
  id: string;
  version: number;
  digest: string;
  content: TTrustedManifest;
  createdAt: Date;
};

export function manifestDigestOf(content: TTrustedManifest): string {
  return canonicalDigest(content);
}

function toStored(row: {
  id: string;
  version: number;
  digest: string;
  content: unknown;
  createdAt: Date;
}): TStoredManifest {
  const parsed = ZTrustedManifestSchema.safeParse(row.content);
  // A stored manifest that no longer parses, or whose digest does not match, is not policy.
  if (!parsed.success || manifestDigestOf(parsed.data) !== row.digest)
    throw new AppError(
      "CONFIG_INVALID",
      `Trusted manifest version ${row.version} is corrupt (schema or digest mismatch).`,
    );
  return { id: row.id, version: row.version, digest: row.digest, content: parsed.data, createdAt: row.createdAt };
}

export async function getActiveManifest(db: Db | DbTx): Promise<TStoredManifest | null> {
  const row = await db.trustedManifest.findFirst({ orderBy: { version: "desc" } });
  return row ? toStored(row) : null;
}

export async function getActiveManifestOrThrow(db: Db | DbTx): Promise<TStoredManifest> {
  const manifest = await getActiveManifest(db);
  if (!manifest)
    throw new AppError(
      "CONFIG_INVALID",
      "No trusted manifest is configured: an operator must define the trusted checks before verification can run.",
    );
  return manifest;
}

export async function listManifests(deps: { db: Db }, input: { take?: number } = {}): Promise<TStoredManifest[]> {
  const rows = await deps.db.trustedManifest.findMany({
    orderBy: { version: "desc" },
    take: Math.min(input.take ?? 50, 500),
  });
  return rows.map(toStored);
}

/** Saves a new version (a no-op returning the active one when the content is unchanged). */
export async function saveTrustedManifest(
  deps: { db: Db },
  input: { content: unknown; actor: Actor | null },
): Promise<TStoredManifest> {
  const { db } = deps;
  const manifest = parseOrThrow(ZTrustedManifestSchema, input.content, {
    code: "VALIDATION_FAILED",
    label: "manifest",
  });
  const digest = manifestDigestOf(manifest);
  return db.$transaction(async (tx) => {
    await tx.$executeRaw`select pg_advisory_xact_lock(7345002)`;
    const active = await getActiveManifest(tx);
    if (active?.digest === digest) return active;
    const row = await tx.trustedManifest.create({
      data: {
        version: (active?.version ?? 0) + 1,
        digest,
        content: manifest as object,
        createdById: actorIdOf(input.actor),
      },
    });
    await recordAudit(tx, {
      actorId: actorIdOf(input.actor),
      action: "manifest.save",
      targetType: "trusted_manifest",
      targetId: row.id,
      detail: { version: row.version, digest },
    });
    return toStored(row);
  });
}
