/**
 * The capability's evidence snapshot: counters, limits, revoked state and reason, and call
 * outcome counts. It never holds payloads, responses, the handle or its hash — there is nothing
 * of them in the rows it reads (RelayCall keeps counts and outcomes only).
 */
import type { Db } from "../db/client";
import { RELAY_MAX_RECORDED_REFUSALS } from "./limits";

export type TRelayUsageSnapshot = {
  capabilityId: string;
  taskId: string;
  allowedOps: string[];
  limits: { maxRequests: number; maxBytes: number; maxRequestBytes: number; maxResponseBytes: number; deadlineAt: string };
  usage: { requestCount: number; bytesUsed: number };
  isRevoked: boolean;
  revokedAt: string | null;
  revokedReason: string | null;
  isExpired: boolean;
  createdAt: string;
  calls: {
    total: number;
    byOutcome: Record<string, number>;
    /** Upstream kinds that answered successfully; `scripted` means canned completions, not a model. */
    upstreams: string[];
    /** True once refusals stopped being recorded (RELAY_MAX_RECORDED_REFUSALS). */
    isRefusalRecordingCapped: boolean;
  };
};

/** The snapshot of one capability, or of the task's most recent one; null when there is none. */
export async function readCapabilityUsage(
  { db }: { db: Db },
  { capabilityId, taskId }: { capabilityId?: string; taskId?: string },
): Promise<TRelayUsageSnapshot | null> {
  if (!capabilityId && !taskId) return null;
  const cap = await db.relayCapability.findFirst({
    where: capabilityId ? { id: capabilityId } : { taskId },
    orderBy: { createdAt: "desc" },
  });
  if (!cap) return null;
  const groups = await db.relayCall.groupBy({ by: ["outcome"], where: { capabilityId: cap.id }, _count: { _all: true } });
  const byOutcome: Record<string, number> = {};
  for (const group of groups) byOutcome[group.outcome] = group._count._all;
  const total = Object.values(byOutcome).reduce((a, b) => a + b, 0);
  const refusals = Object.entries(byOutcome)
    .filter(([outcome]) => !outcome.startsWith("ok:"))
    .reduce((a, [, n]) => a + n, 0);
  const upstreams = Object.keys(byOutcome)
    .filter((o) => o.startsWith("ok:"))
    .map((o) => o.slice(3))
    .sort();
  return {
    capabilityId: cap.id,
    taskId: cap.taskId,
    allowedOps: [...cap.allowedOps],
    limits: {
      maxRequests: cap.maxRequests,
      maxBytes: Number(cap.maxBytes),
      maxRequestBytes: cap.maxRequestBytes,
      maxResponseBytes: cap.maxResponseBytes,
      deadlineAt: cap.deadlineAt.toISOString(),
    },
    usage: { requestCount: cap.requestCount, bytesUsed: Number(cap.bytesUsed) },
    isRevoked: cap.revokedAt !== null,
    revokedAt: cap.revokedAt?.toISOString() ?? null,
    revokedReason: cap.revokedReason,
    isExpired: cap.deadlineAt.getTime() <= Date.now(),
    createdAt: cap.createdAt.toISOString(),
    calls: { total, byOutcome, upstreams, isRefusalRecordingCapped: refusals >= RELAY_MAX_RECORDED_REFUSALS },
  };
}
