/**
 * One row per task for comparing attempts (issue 26) — the group table on the teacher's queue, the
 * CLI's `attempt show` and the results export: which agent (profile, owner, version) ran it, where
 * it is, its latest round's trusted checks passed and failed, rounds, relay tokens and model cost
 * over every round and attempt (RelayCall via RelayCapability), the final decision and who made
 * it, and the time from the round's review_pending to that decision.
 */
import type { Db } from "../db/client";
import type { Prisma } from "../db/generated/client";
import { ZEvidenceContentSchema } from "../contract/verification-evidence";

export type TAttemptRow = {
  taskId: string;
  attemptGroupId: string | null;
  repository: string;
  issueNumber: number;
  issueTitle: string;
  agent: string | null;
  owner: string | null;
  profileVersion: number | null;
  state: string;
  rounds: number;
  candidateId: string | null;
  checksPassed: number | null;
  checksFailed: number | null;
  inputTokens: number;
  outputTokens: number;
  costMicros: number;
  /** the latest approve/reject; "request_changes" when the latest round's only decision asked for changes */
  decision: string | null;
  decidedBy: string | null;
  decidedAt: Date | null;
  /** from the latest review_pending before the decision to the decision */
  secondsToReview: number | null;
  createdAt: Date;
};

/**
 * Anonymous review (setting review.anonymous): an attempt's owner stays hidden until a decision on
 * it is recorded or its group's attempt is chosen, so the teacher judges the work, not the student.
 */
export function hideOwnerUntilDecided<T extends { owner: string | null; decision: string | null }>(
  row: T,
  options: { isAnonymous: boolean; isGroupDecided: boolean },
): T & { isOwnerHidden: boolean } {
  const isOwnerHidden = options.isAnonymous && !options.isGroupDecided && row.decision === null && row.owner !== null;
  return { ...row, owner: isOwnerHidden ? null : row.owner, isOwnerHidden };
}

/** A bound so an export of "everything" stays one bounded read. */
export const MAX_ATTEMPT_ROWS = 10_000;

export async function readAttemptRows(
  deps: { db: Db },
  input: { where: Prisma.TaskWhereInput },
): Promise<TAttemptRow[]> {
  const { db } = deps;
  const tasks = await db.task.findMany({
    where: { probeRunId: null, ...input.where },
    orderBy: [{ createdAt: "asc" }, { id: "asc" }],
    take: MAX_ATTEMPT_ROWS,
    include: {
      repository: { select: { name: true } },
      agentProfileVersion: { select: { version: true, profile: { select: { name: true, owner: true } } } },
      candidates: { orderBy: { round: "desc" }, take: 1, select: { id: true, round: true } },
      decisions: {
        orderBy: { createdAt: "desc" },
        select: { verdict: true, createdAt: true, candidateId: true, teacher: { select: { email: true } } },
      },
    },
  });
  if (tasks.length === 0) return [];
  const ids = tasks.map((t) => t.id);
  const [relay, evidence, reviewPending] = await Promise.all([
    db.$queryRaw<{ taskId: string; input: bigint | null; output: bigint | null; cost: bigint | null }[]>`
      SELECT cap."taskId", sum(rc."inputTokens")::bigint AS input, sum(rc."outputTokens")::bigint AS output, sum(rc."costMicros")::bigint AS cost
        FROM "RelayCall" rc JOIN "RelayCapability" cap ON cap.id = rc."capabilityId"
       WHERE cap."taskId" = any(${ids}::uuid[]) GROUP BY cap."taskId"`,
    db.verificationEvidence.findMany({
      where: { candidateId: { in: tasks.flatMap((t) => (t.candidates[0] ? [t.candidates[0].id] : [])) } },
      orderBy: { createdAt: "desc" },
      distinct: ["candidateId"],
      select: { candidateId: true, checks: true, isPass: true },
    }),
    db.taskTransition.findMany({
      where: { taskId: { in: ids }, toState: "review_pending" },
      orderBy: { createdAt: "asc" },
      select: { taskId: true, createdAt: true },
    }),
  ]);
  const relayOf = new Map(relay.map((r) => [r.taskId, r]));
  const evidenceOf = new Map(evidence.map((e) => [e.candidateId, e]));
  return tasks.map((task): TAttemptRow => {
    const candidate = task.candidates[0] ?? null;
    const ev = candidate ? evidenceOf.get(candidate.id) : undefined;
    const content = ev ? ZEvidenceContentSchema.safeParse(ev.checks) : undefined;
    const checks = content?.success ? content.data.checks : null;
    const final = task.decisions.find((d) => d.verdict !== "request_changes") ?? task.decisions[0] ?? null;
    const waitStart = final
      ? reviewPending.filter((r) => r.taskId === task.id && r.createdAt <= final.createdAt).at(-1)?.createdAt
      : undefined;
    const sums = relayOf.get(task.id);
    return {
      taskId: task.id,
      attemptGroupId: task.attemptGroupId,
      repository: task.repository.name,
      issueNumber: task.issueNumber,
      issueTitle: task.issueTitle,
      agent: task.agentProfileVersion?.profile.name ?? null,
      owner: task.agentProfileVersion?.profile.owner ?? null,
      profileVersion: task.agentProfileVersion?.version ?? null,
      state: task.state,
      rounds: task.round,
      candidateId: candidate?.id ?? null,
      checksPassed: checks ? checks.filter((c) => c.status === "passed").length : null,
      checksFailed: checks ? checks.filter((c) => c.status !== "passed").length : null,
      inputTokens: Number(sums?.input ?? 0),
      outputTokens: Number(sums?.output ?? 0),
      costMicros: Number(sums?.cost ?? 0),
      decision: final?.verdict ?? null,
      decidedBy: final?.teacher.email ?? null,
      decidedAt: final?.createdAt ?? null,
      secondsToReview: final && waitStart ? (final.createdAt.getTime() - waitStart.getTime()) / 1000 : null,
      createdAt: task.createdAt,
    };
  });
}
