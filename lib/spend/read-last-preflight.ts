/**
 * The provider account's spend surface as the last account preflight (probe P0) observed it:
 * budget, prepaid credit, low-balance threshold and the period's cost, with when it was taken.
 * Read-only and bounded (the probe stores a sanitized, size-capped detail).
 */
import type { Db } from "../db/client";

export async function readLastPreflight(deps: { db: Db }) {
  const row = await deps.db.probeResult.findFirst({
    where: { probe: "P0", status: { in: ["passed", "failed"] } },
    orderBy: { finishedAt: "desc" },
    select: { status: true, finishedAt: true, detail: true, runId: true },
  });
  if (!row) return null;
  const detail = (row.detail ?? {}) as {
    observed?: Record<string, unknown>;
    headroomMicros?: number;
    headroomSource?: string;
    reason?: string;
  };
  return {
    status: row.status,
    finishedAt: row.finishedAt,
    runId: row.runId,
    observed: detail.observed ?? {},
    headroomMicros: detail.headroomMicros ?? null,
    headroomSource: detail.headroomSource ?? null,
    reason: detail.reason ?? null,
  };
}
