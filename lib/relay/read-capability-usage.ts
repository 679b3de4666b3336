/**
 * The capability's evidence snapshot: counters, limits, revoked state and reason, call outcome
 * counts, tokens and model cost (issue 25). It never holds payloads, responses, the handle or its
 * hash — there is nothing of them in the rows it reads (RelayCall keeps counts and outcomes only).
 * Tokens are summed from what the upstream reported; a call whose upstream did not report them is
 * counted apart (its charge is its worst case), so a sum is never mistaken for the whole truth.
 */
import type { Db } from "../db/client";
import { RELAY_MAX_RECORDED_REFUSALS } from "./limits";

export type TRelayUsageSnapshot = {
  capabilityId: string;
  taskId: string;
  allowedOps: string[];
  limits: {
    maxRequests: number;
    maxBytes: number;
    maxRequestBytes: number;
    maxResponseBytes: number;
    deadlineAt: string;
  };
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
  /** This capability: reported input/output tokens, tokens charged to the budget, the budget. */
  tokens: TTokenSums & { max: number };
  /** This capability's model cost so far: the sum of its calls' costs, micro-dollars. */
  modelCostMicros: number;
  /** Model spend still reserved in the ledger for this capability (its worst case; 0 once settled). */
  modelReservedMicros: number;
  /** The price the capability was issued under, micro-dollars per million tokens. */
  prices: { inputMicrosPerMTok: number; outputMicrosPerMTok: number };
  /** Every capability of the task (all attempts and rounds) together. */
  task: { capabilities: number; tokens: TTokenSums; modelCostMicros: number };
};

export type TTokenSums = {
  input: number;
  output: number;
  charged: number;
  /** Calls recorded without reported tokens: their charge is their worst case, not counted in input/output. */
  unreportedCalls: number;
};

/** Token and cost sums over the relay calls of the given capabilities. */
export async function sumRelayCallTokens(
  db: Db,
  where: { capabilityId: string } | { taskId: string },
): Promise<{ tokens: TTokenSums; modelCostMicros: number }> {
  const filter =
    "capabilityId" in where ? { capabilityId: where.capabilityId } : { capability: { taskId: where.taskId } };
  const [sums, unreported] = await Promise.all([
    db.relayCall.aggregate({
      where: filter,
      _sum: { inputTokens: true, outputTokens: true, tokensCharged: true, costMicros: true },
    }),
    db.relayCall.count({ where: { ...filter, inputTokens: null, tokensCharged: { gt: 0 } } }),
  ]);
  return {
    tokens: {
      input: sums._sum.inputTokens ?? 0,
      output: sums._sum.outputTokens ?? 0,
      charged: sums._sum.tokensCharged ?? 0,
      unreportedCalls: unreported,
    },
    modelCostMicros: Number(sums._sum.costMicros ?? 0n),
  };
}

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
  const [groups, own, all, capabilities] = await Promise.all([
    db.relayCall.groupBy({ by: ["outcome"], where: { capabilityId: cap.id }, _count: { _all: true } }),
    sumRelayCallTokens(db, { capabilityId: cap.id }),
    sumRelayCallTokens(db, { taskId: cap.taskId }),
    db.relayCapability.count({ where: { taskId: cap.taskId } }),
  ]);
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
    tokens: { ...own.tokens, max: Number(cap.maxTokens) },
    modelCostMicros: own.modelCostMicros,
    modelReservedMicros: Number(cap.modelReservedMicros),
    prices: { inputMicrosPerMTok: cap.inputMicrosPerMTok, outputMicrosPerMTok: cap.outputMicrosPerMTok },
    task: { capabilities, ...all },
  };
}
