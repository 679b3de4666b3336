/**
 * The teacher's insights (issue 14), per repository and per student-agent configuration (the
 * command and guest image a task ran with, grouped by digest): approval rate, first-round approval
 * rate, rounds to approval, trusted-check pass rate, median time from task creation to its first
 * review and from review to decision, and model relay usage per approved task: calls, bytes,
 * tokens the upstream reported and model cost (issue 25) — every round and attempt of the approved
 * tasks, divided by the number of approved tasks (each approved task is one pull request). Computed
 * in PostgreSQL over tasks created in the chosen window; probe tasks never count. Also per agent
 * profile (issue 26): an attempt ended as not_chosen was never decided on its own and counts as
 * undecided, so a profile's approval rate is over the decisions its own attempts received.
 *
 * Definitions (also shown on the page): a task is *decided* when its latest approve/reject
 * decision exists (a "Request changes" only ends a round); approval rate = approved / decided;
 * first-round approval rate = approved in round 1 / decided; review → decision is measured per
 * decision from the review_pending transition before it.
 */
import { z } from "zod";
import type { Db } from "../db/client";
import { Prisma } from "../db/generated/client";
import { parseOrThrow } from "../parse-or-throw";

export const ZInsightsQuerySchema = z
  .object({
    /** days back from now; 0 = all time */
    days: z.coerce
      .number()
      .int()
      .refine((d) => [0, 7, 30, 90, 365].includes(d))
      .catch(90)
      .default(90),
  })
  .strip();

export type TInsightsRow = {
  key: string;
  label: string;
  tasks: number;
  decided: number;
  approved: number;
  approvedFirstRound: number;
  approvalRate: number | null;
  firstRoundApprovalRate: number | null;
  meanRoundsToApproval: number | null;
  checkPassRate: number | null;
  medianSecondsToReview: number | null;
  medianSecondsToDecision: number | null;
  relayCallsPerApproved: number | null;
  relayBytesPerApproved: number | null;
  inputTokensPerApproved: number | null;
  outputTokensPerApproved: number | null;
  /** micro-dollars */
  modelCostMicrosPerApproved: number | null;
};

type TRawRow = {
  key: string;
  tasks: bigint;
  decided: bigint;
  approved: bigint;
  approved_first: bigint;
  mean_rounds: number | null;
  ev_passed: bigint | null;
  ev_total: bigint | null;
  median_to_review: number | null;
  approved_calls: bigint | null;
  approved_bytes: bigint | null;
  approved_input_tokens: bigint | null;
  approved_output_tokens: bigint | null;
  approved_cost: bigint | null;
};

const GROUPS = {
  repository: Prisma.raw(`t.repository`),
  agent: Prisma.raw(`t.agent`),
  profile: Prisma.raw(`t.profile`),
} as const;

/** The insights key of tasks that ran no agent profile (before profiles, or the operator's default command). */
export const NO_PROFILE_KEY = "";

function ratio(part: number, whole: number): number | null {
  return whole > 0 ? part / whole : null;
}

async function readGroups(db: Db, group: keyof typeof GROUPS, since: Date) {
  const key = GROUPS[group];
  const base = Prisma.sql`
    t AS (
      SELECT task.id, task."createdAt", repo.name AS repository, coalesce(task."agentConfigDigest", 'unrecorded') AS agent,
             coalesce(profile.name, ${NO_PROFILE_KEY}) AS profile
        FROM "Task" task JOIN "TargetRepository" repo ON repo.id = task."repositoryId"
        LEFT JOIN "AgentProfileVersion" version ON version.id = task."agentProfileVersionId"
        LEFT JOIN "AgentProfile" profile ON profile.id = version."profileId"
       WHERE task."probeRunId" IS NULL AND task."createdAt" >= ${since}
    ),
    d AS (
      SELECT dec."taskId", dec.verdict, cand.round, dec."createdAt"
        FROM "ReviewDecision" dec JOIN "Candidate" cand ON cand.id = dec."candidateId"
       WHERE dec."taskId" IN (SELECT id FROM t)
    )`;
  const rows = await db.$queryRaw<TRawRow[]>`
    WITH ${base},
    final AS (
      SELECT DISTINCT ON ("taskId") "taskId", verdict, round FROM d WHERE verdict IN ('approve', 'reject') ORDER BY "taskId", "createdAt" DESC
    ),
    first_review AS (
      SELECT "taskId", min("createdAt") AS at FROM "TaskTransition" WHERE "toState" = 'review_pending' AND "taskId" IN (SELECT id FROM t) GROUP BY "taskId"
    ),
    ev AS (
      SELECT "taskId", count(*) AS n, count(*) FILTER (WHERE "isPass") AS passed FROM "VerificationEvidence" WHERE "taskId" IN (SELECT id FROM t) GROUP BY "taskId"
    ),
    relay AS (
      SELECT cap."taskId", count(*) FILTER (WHERE rc.outcome LIKE 'ok%') AS calls, sum(rc."requestBytes" + rc."responseBytes") AS bytes,
             sum(rc."inputTokens") AS input_tokens, sum(rc."outputTokens") AS output_tokens, sum(rc."costMicros") AS cost
        FROM "RelayCall" rc JOIN "RelayCapability" cap ON cap.id = rc."capabilityId"
       WHERE cap."taskId" IN (SELECT id FROM t) GROUP BY cap."taskId"
    )
    SELECT ${key} AS key,
           count(*) AS tasks,
           count(final."taskId") AS decided,
           count(*) FILTER (WHERE final.verdict = 'approve') AS approved,
           count(*) FILTER (WHERE final.verdict = 'approve' AND final.round = 1) AS approved_first,
           (avg(final.round) FILTER (WHERE final.verdict = 'approve'))::float8 AS mean_rounds,
           sum(ev.passed)::bigint AS ev_passed,
           sum(ev.n)::bigint AS ev_total,
           (percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM fr.at - t."createdAt")))::float8 AS median_to_review,
           (sum(relay.calls) FILTER (WHERE final.verdict = 'approve'))::bigint AS approved_calls,
           (sum(relay.bytes) FILTER (WHERE final.verdict = 'approve'))::bigint AS approved_bytes,
           (sum(relay.input_tokens) FILTER (WHERE final.verdict = 'approve'))::bigint AS approved_input_tokens,
           (sum(relay.output_tokens) FILTER (WHERE final.verdict = 'approve'))::bigint AS approved_output_tokens,
           (sum(relay.cost) FILTER (WHERE final.verdict = 'approve'))::bigint AS approved_cost
      FROM t
      LEFT JOIN final ON final."taskId" = t.id
      LEFT JOIN first_review fr ON fr."taskId" = t.id
      LEFT JOIN ev ON ev."taskId" = t.id
      LEFT JOIN relay ON relay."taskId" = t.id
     GROUP BY 1
     ORDER BY 1`;
  const waits = await db.$queryRaw<{ key: string; median: number | null }[]>`
    WITH ${base}
    SELECT ${key} AS key,
           (percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM d."createdAt" - (
              SELECT max(tt."createdAt") FROM "TaskTransition" tt
               WHERE tt."taskId" = d."taskId" AND tt."toState" = 'review_pending' AND tt."createdAt" <= d."createdAt"))))::float8 AS median
      FROM d JOIN t ON t.id = d."taskId"
     GROUP BY 1`;
  const waitOf = new Map(waits.map((w) => [w.key, w.median]));
  return rows.map((row): Omit<TInsightsRow, "label"> => {
    const decided = Number(row.decided);
    const approved = Number(row.approved);
    return {
      key: row.key,
      tasks: Number(row.tasks),
      decided,
      approved,
      approvedFirstRound: Number(row.approved_first),
      approvalRate: ratio(approved, decided),
      firstRoundApprovalRate: ratio(Number(row.approved_first), decided),
      meanRoundsToApproval: row.mean_rounds,
      checkPassRate: ratio(Number(row.ev_passed ?? 0), Number(row.ev_total ?? 0)),
      medianSecondsToReview: row.median_to_review,
      medianSecondsToDecision: waitOf.get(row.key) ?? null,
      relayCallsPerApproved: approved > 0 ? Number(row.approved_calls ?? 0) / approved : null,
      relayBytesPerApproved: approved > 0 ? Number(row.approved_bytes ?? 0) / approved : null,
      inputTokensPerApproved: approved > 0 ? Number(row.approved_input_tokens ?? 0) / approved : null,
      outputTokensPerApproved: approved > 0 ? Number(row.approved_output_tokens ?? 0) / approved : null,
      modelCostMicrosPerApproved: approved > 0 ? Number(row.approved_cost ?? 0) / approved : null,
    };
  });
}

/** A readable name for an agent configuration digest: its command and image, from one task that ran it. */
async function readAgentLabels(db: Db, digests: readonly string[]): Promise<Map<string, string>> {
  const known = digests.filter((d) => d !== "unrecorded");
  const rows = known.length
    ? await db.task.findMany({
        where: { agentConfigDigest: { in: known } },
        distinct: ["agentConfigDigest"],
        select: { agentConfigDigest: true, agentConfig: true },
      })
    : [];
  const labels = new Map<string, string>([
    ["unrecorded", "not recorded (tasks run before configurations were recorded)"],
  ]);
  for (const row of rows) {
    const config = z
      .object({
        command: z.array(z.string()),
        image: z.object({ reference: z.string() }).passthrough(),
        profile: z.object({ name: z.string(), version: z.number() }).passthrough().optional(),
      })
      .safeParse(row.agentConfig);
    // Absolute paths are shortened to their last part: the digest still tells configurations apart.
    const command = config.success
      ? config.data.command.map((arg) => (arg.startsWith("/") ? (arg.split("/").at(-1) ?? arg) : arg)).join(" ")
      : "";
    const profile =
      config.success && config.data.profile ? `${config.data.profile.name} v${config.data.profile.version} · ` : "";
    const text = config.success ? `${profile}${command} · ${config.data.image.reference}` : "unreadable configuration";
    labels.set(row.agentConfigDigest!, `${text.slice(0, 160)} (${row.agentConfigDigest!.slice(0, 8)})`);
  }
  return labels;
}

/** Every round from 1 to the last one with an approval, zero where none: the chart shows the gaps. */
function fillRounds(rows: { round: number; approved: number }[]): { round: number; approved: number }[] {
  const last = rows.reduce((max, r) => Math.max(max, r.round), 0);
  return Array.from({ length: last }, (_, i) => ({
    round: i + 1,
    approved: rows.find((r) => r.round === i + 1)?.approved ?? 0,
  }));
}

export async function readReviewInsights(
  deps: { db: Db; now?: () => Date },
  input: z.input<typeof ZInsightsQuerySchema> = {},
) {
  const { db } = deps;
  const query = parseOrThrow(ZInsightsQuerySchema, input, { code: "VALIDATION_FAILED", label: "insights query" });
  const now = deps.now?.() ?? new Date();
  const since = query.days === 0 ? new Date(0) : new Date(now.getTime() - query.days * 24 * 3600 * 1000);
  const [byRepository, byAgent, byProfile, roundsRows] = await Promise.all([
    readGroups(db, "repository", since),
    readGroups(db, "agent", since),
    readGroups(db, "profile", since),
    db.$queryRaw<{ round: number; approved: bigint }[]>`
      SELECT final.round, count(*) AS approved FROM (
        SELECT DISTINCT ON (dec."taskId") dec."taskId", dec.verdict, cand.round
          FROM "ReviewDecision" dec JOIN "Candidate" cand ON cand.id = dec."candidateId" JOIN "Task" task ON task.id = dec."taskId"
         WHERE task."probeRunId" IS NULL AND task."createdAt" >= ${since} AND dec.verdict IN ('approve', 'reject')
         ORDER BY dec."taskId", dec."createdAt" DESC) final
       WHERE final.verdict = 'approve' GROUP BY final.round ORDER BY final.round`,
  ]);
  const labels = await readAgentLabels(
    db,
    byAgent.map((r) => r.key),
  );
  const owners = new Map(
    (
      await db.agentProfile.findMany({
        where: { name: { in: byProfile.map((r) => r.key) } },
        select: { name: true, owner: true },
      })
    ).map((p) => [p.name, p.owner]),
  );
  return {
    query,
    since,
    // Per agent profile (issue 26): which student's agent does better on the same issues.
    byProfile: byProfile.map((r) => ({
      ...r,
      label:
        r.key === NO_PROFILE_KEY
          ? "no profile (the operator's default agent)"
          : `${r.key}${owners.get(r.key) ? ` · ${owners.get(r.key)}` : ""}`,
    })),
    byRepository: byRepository.map((r) => ({ ...r, label: r.key })),
    byAgent: byAgent.map((r) => ({ ...r, label: labels.get(r.key) ?? r.key })),
    roundsToApproval: fillRounds(roundsRows.map((r) => ({ round: Number(r.round), approved: Number(r.approved) }))),
  };
}

export type TReviewInsights = Awaited<ReturnType<typeof readReviewInsights>>;
