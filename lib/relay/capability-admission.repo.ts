/**
 * Admission, the first of a relay call's two statements (capability.repo.ts says why two, and why
 * prepared and shared): the lone-call, batch and mailbox forms, which judge with the same SQL
 * conditions (eligibleSql).
 */
import { pgPoolOf, type Db } from "../db/client";
import type { TCapabilityState } from "./admission";
import { retryOnDeadlock, toState, type TRawCapability } from "./capability.repo";
import { createStatementBatcher, type TStatementBatcher } from "./statement-batcher";

/** The capability as the admission statement saw it (under its row lock), and what it decided. */
export type TAdmission = TCapabilityState & {
  relayChannel: string;
  isAdmitted: boolean;
  /** Bytes reserved for the response: the worst case (maxResponseBytes), or what the budget has left. */
  reservedResponseBytes: number;
  /** The `relay.upstream` setting's version (0 = never set): the transport cache compares it. */
  upstreamVersion: number;
};

type TRawAdmission = TRawCapability & {
  relayChannel: string;
  isAdmitted: boolean;
  reserve: bigint | string;
  upstreamVersion: number | null;
};

/**
 * Admission, the first of a call's two statements: looks the capability up by its handle hash,
 * locks the row, and — only if every condition of the capability contract holds (task binding,
 * channel, revocation, deadline, operation, request size, request count, bytes) — takes one
 * request slot and reserves the request bytes plus the worst-case response (what is left of the
 * budget when that is less). Reserved bytes sit in `bytesUsed` until settlement releases what the
 * response did not use, so concurrent callers can never overshoot the budget. The row is returned
 * either way (null = unknown handle), so a refusal is explained without a second read.
 */
export async function admitCallByHash(db: Db, call: TAdmissionRequest): Promise<TAdmission | null> {
  return admitBatcherOf(db).submit(call);
}

export type TAdmissionRequest = {
  handleHash: string;
  taskId: string;
  operation: string;
  requestBytes: number;
  channel: string;
  /** The call's worst case in tokens (input bound + output bound), reserved against `maxTokens`. */
  tokenBound: number;
};

/**
 * Every condition of the capability contract but the request count and the bytes, as one SQL
 * expression over the locked row `cap` (with its task's "relayChannel") and the call's values: task
 * binding, channel, revocation, deadline, operation, request size. The one-call, batch and mailbox
 * admissions all judge with it.
 */
function eligibleSql(cap: string, call: { taskId: string; channel: string; operation: string; bytes: string }): string {
  return `(${call.taskId} = ${cap}."taskId"
              AND (${call.channel} <> 'http' OR ${cap}."relayChannel" = 'http')
              AND ${cap}."revokedAt" IS NULL
              AND ${cap}."deadlineAt" > now()
              AND ${call.operation} = ANY(${cap}."allowedOps")
              AND ${call.bytes} <= ${cap}."maxRequestBytes")`;
}

/** A lone call's admission: the one-call statement (see the module comment). */
export async function admitAlone(db: Db, call: TAdmissionRequest): Promise<TAdmission | null> {
  const { rows } = await pgPoolOf(db).query<TRawAdmission>({
    name: "relay_admit_one_v2",
    text: ADMIT_ONE_SQL,
    values: [
      call.handleHash,
      String(call.requestBytes),
      call.taskId,
      call.channel,
      call.operation,
      String(call.tokenBound),
    ],
  });
  return rows[0] ? toAdmission(rows[0]) : null;
}

/**
 * The admission of a batch of calls (statement-batcher.ts: the calls that arrived while the
 * previous admission ran), in one statement. Every capability named is locked in id order (so two
 * relay processes never deadlock on each other), and each call is judged in arrival order as if
 * alone against what the calls before it in the batch took: the per-call conditions of the
 * capability contract, then the request count and the bytes, where every admitted call before
 * counts with its worst-case response. Past the first call the byte budget cannot hold, that
 * over-counts at most, never under: a budget can be refused early, never overshot. Each answer
 * carries the row as that call saw it, so a refusal is explained exactly as a lone call's is.
 */
export async function admitBatch(db: Db, calls: readonly TAdmissionRequest[]): Promise<(TAdmission | null)[]> {
  const { rows } = await retryOnDeadlock(() =>
    pgPoolOf(db).query<TRawAdmission & { ord: string }>({
      name: "relay_admit_batch_v3",
      text: ADMIT_BATCH_SQL,
      values: [
        calls.map((c) => c.handleHash),
        calls.map((c) => String(c.requestBytes)),
        calls.map((c) => c.taskId),
        calls.map((c) => c.channel),
        calls.map((c) => c.operation),
        calls.map((c) => String(c.tokenBound)),
      ],
    }),
  );
  const answers: (TAdmission | null)[] = calls.map(() => null);
  for (const { ord, ...row } of rows) answers[Number(ord) - 1] = toAdmission(row);
  return answers;
}

// $1 handle hashes, $2 request bytes, $3 task ids, $4 channels, $5 operations, $6 token bounds: one element per call.
const ADMIT_BATCH_SQL = `
    WITH req AS (
      SELECT * FROM unnest($1::text[], $2::bigint[], $3::uuid[], $4::text[], $5::text[], $6::bigint[]) WITH ORDINALITY
          AS r("handleHash", "bytes", "callTaskId", "channel", "operation", "tokens", "ord")
    ), locked AS (
      SELECT c."id", c."handleHash", c."taskId", c."allowedOps", c."maxRequests", c."maxBytes", c."maxRequestBytes", c."maxResponseBytes",
             c."requestCount", c."bytesUsed", c."maxTokens", c."tokensUsed", c."inputMicrosPerMTok", c."outputMicrosPerMTok",
             c."deadlineAt", c."revokedAt", c."revokedReason", now() AS "dbNow", t."relayChannel"
        FROM "RelayCapability" c JOIN "Task" t ON t."id" = c."taskId"
       WHERE c."handleHash" IN (SELECT "handleHash" FROM req)
       ORDER BY c."id"
         FOR UPDATE OF c
    ), judged AS (
      SELECT req."ord", req."bytes", req."tokens", l."id" AS "capId", l."requestCount" AS "countAtStart", l."bytesUsed" AS "bytesAtStart",
             l."maxRequests" AS "countLimit", l."maxBytes" AS "bytesLimit", l."maxResponseBytes"::bigint AS "worstResponse",
             l."tokensUsed" AS "tokensAtStart", l."maxTokens" AS "tokensLimit",
             ${eligibleSql("l", { taskId: 'req."callTaskId"', channel: 'req."channel"', operation: 'req."operation"', bytes: 'req."bytes"' })} AS "isEligible"
        FROM req JOIN locked l ON l."handleHash" = req."handleHash"
    ), running AS (
      SELECT j.*,
             count(*) FILTER (WHERE j."isEligible") OVER upto AS "eligibleUpTo",
             COALESCE(sum(j."bytes" + j."worstResponse") FILTER (WHERE j."isEligible") OVER before, 0) AS "worstBefore",
             COALESCE(sum(j."tokens") FILTER (WHERE j."isEligible") OVER before, 0) AS "tokensBefore"
        FROM judged j
      WINDOW upto AS (PARTITION BY j."capId" ORDER BY j."ord" ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW),
             before AS (PARTITION BY j."capId" ORDER BY j."ord" ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
    ), decided AS (
      SELECT r.*,
             (r."isEligible"
              AND r."countAtStart" + r."eligibleUpTo" <= r."countLimit"
              AND r."bytesAtStart" + r."worstBefore" + r."bytes" <= r."bytesLimit"
              AND r."tokensAtStart" + r."tokensBefore" + r."tokens" <= r."tokensLimit") AS "isAdmitted",
             LEAST(r."worstResponse", r."bytesLimit" - r."bytesAtStart" - r."worstBefore" - r."bytes") AS "reserve"
        FROM running r
    ), seen AS (
      SELECT d.*,
             d."countAtStart" + count(*) FILTER (WHERE d."isAdmitted") OVER before AS "countSeen",
             d."bytesAtStart" + COALESCE(sum(d."bytes" + d."reserve") FILTER (WHERE d."isAdmitted") OVER before, 0) AS "bytesSeen",
             d."tokensAtStart" + COALESCE(sum(d."tokens") FILTER (WHERE d."isAdmitted") OVER before, 0) AS "tokensSeen"
        FROM decided d
      WINDOW before AS (PARTITION BY d."capId" ORDER BY d."ord" ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)
    ), totals AS (
      SELECT "capId", count(*) AS "admitted", sum("bytes" + "reserve") AS "charged", sum("tokens") AS "tokens"
        FROM decided WHERE "isAdmitted" GROUP BY "capId"
    ), updated AS (
      UPDATE "RelayCapability" c
         SET "requestCount" = c."requestCount" + t."admitted", "bytesUsed" = c."bytesUsed" + t."charged", "tokensUsed" = c."tokensUsed" + t."tokens"
        FROM totals t
       WHERE c."id" = t."capId"
      RETURNING c."id"
    )
    SELECT s."ord", l."id", l."taskId", l."allowedOps", l."maxRequests", l."maxBytes", l."maxRequestBytes", l."maxResponseBytes",
           s."countSeen"::int AS "requestCount", s."bytesSeen" AS "bytesUsed", l."maxTokens", s."tokensSeen" AS "tokensUsed",
           l."inputMicrosPerMTok", l."outputMicrosPerMTok", l."deadlineAt", l."revokedAt", l."revokedReason", l."dbNow",
           l."relayChannel", s."isAdmitted", s."reserve",
           (SELECT max(v."version") FROM "SettingVersion" v WHERE v."key" = 'relay.upstream') AS "upstreamVersion"
      FROM seen s JOIN locked l ON l."id" = s."capId"`;

/**
 * Admission statements per client: the relay's group commit (statement-batcher.ts). One statement of
 * each kind in flight: at 64 concurrent calls that made batches larger and cost PostgreSQL 35–40 %
 * less CPU per call than two in flight (`npm run bench:relay`: 123–142 against 194–222 µs per
 * call, 15–18 % more calls per second); a lone call still goes at once.
 */
const admitBatchers = new WeakMap<Db, TStatementBatcher<TAdmissionRequest, TAdmission | null>>();

function admitBatcherOf(db: Db): TStatementBatcher<TAdmissionRequest, TAdmission | null> {
  let batcher = admitBatchers.get(db);
  if (!batcher) {
    batcher = createStatementBatcher<TAdmissionRequest, TAdmission | null>({
      run: async (calls) => (calls.length === 1 ? [await admitAlone(db, calls[0]!)] : admitBatch(db, calls)),
      maxInFlight: 1,
      maxBatch: 256,
    });
    admitBatchers.set(db, batcher);
  }
  return batcher;
}

/** A mailbox admission also says whether its sequence was claimed: null = already claimed before (a re-poll), or another task's handle. */
export type TMailboxAdmission = TAdmission & { claimedId: bigint | null };

/**
 * The mailbox's admission: the same statement, and in it the claim of the request's sequence
 * number (the unique (capabilityId, channel, sequence) index makes a re-polled request lose
 * here). A call is admitted only when its claim is new, and a claim is made only for the task
 * the handle is bound to — a leaked handle cannot occupy the owning task's sequence numbers. So
 * a mailbox call, like an HTTP one, is two statements: this, then settlement.
 */
export async function admitMailboxCallByHash(
  db: Db,
  call: Omit<TAdmissionRequest, "channel"> & { sequence: number },
): Promise<TMailboxAdmission | null> {
  const { rows } = await pgPoolOf(db).query<TRawAdmission & { claimedId: string | null }>({
    name: "relay_admit_mailbox_v3",
    text: ADMIT_MAILBOX_SQL,
    values: [
      call.handleHash,
      String(call.requestBytes),
      call.taskId,
      "mailbox",
      call.operation,
      String(call.tokenBound),
      call.sequence,
    ],
  });
  const row = rows[0];
  if (!row) return null;
  const { claimedId, ...admission } = row;
  return { ...toAdmission(admission), claimedId: claimedId === null ? null : BigInt(claimedId) };
}

/** The outcome recorded for a mailbox sequence claimed before ("pending" while its call is in flight). */
export async function readClaimedOutcome(db: Db, call: { capabilityId: string; sequence: number }): Promise<string> {
  const previous = await db.relayCall.findFirst({
    where: { capabilityId: call.capabilityId, channel: "mailbox", sequence: call.sequence },
    select: { outcome: true },
  });
  return previous?.outcome ?? "pending";
}

function toAdmission(row: TRawAdmission): TAdmission {
  const { relayChannel, isAdmitted, reserve, upstreamVersion, ...cap } = row;
  return {
    ...toState(cap),
    relayChannel,
    isAdmitted,
    reservedResponseBytes: isAdmitted ? Number(reserve) : 0,
    upstreamVersion: upstreamVersion ?? 0,
  };
}

/**
 * A lone call's admission, and the mailbox's (`withClaim`: the claim of the request's sequence
 * number, made only for the task the handle is bound to, and a call admitted only when its claim
 * is new). $1 handle hash, $2 request bytes, $3 task id, $4 channel, $5 operation (a known name or
 * "unknown"), $6 the call's token bound, $7 the mailbox sequence. The row is locked, judged as the batch form judges a
 * batch's first call, and returned as it was before this call (null = unknown handle). Named
 * (prepared) statements: parsed and planned once per connection.
 */
function admitOneSql(withClaim: boolean): string {
  const claim = `, claim AS (
      INSERT INTO "RelayCall" ("capabilityId", "channel", "sequence", "operation", "outcome", "requestBytes", "responseBytes", "durationMs")
      SELECT cap."id", $4::text, $7::int, $5::text, 'pending', 0, 0, 0 FROM cap WHERE cap."taskId" = $3::uuid
      ON CONFLICT ("capabilityId", "channel", "sequence") DO NOTHING
      RETURNING "id"
    )`;
  return `
    WITH cap AS (
      SELECT c."id", c."taskId", c."allowedOps", c."maxRequests", c."maxBytes", c."maxRequestBytes", c."maxResponseBytes",
             c."requestCount", c."bytesUsed", c."maxTokens", c."tokensUsed", c."inputMicrosPerMTok", c."outputMicrosPerMTok",
             c."deadlineAt", c."revokedAt", c."revokedReason", now() AS "dbNow", t."relayChannel",
             LEAST(c."maxResponseBytes"::bigint, c."maxBytes" - c."bytesUsed" - $2::bigint) AS "reserve"
        FROM "RelayCapability" c JOIN "Task" t ON t."id" = c."taskId"
       WHERE c."handleHash" = $1::text
         FOR UPDATE OF c
    )${withClaim ? claim : ""}, admitted AS (
      UPDATE "RelayCapability" c
         SET "requestCount" = cap."requestCount" + 1,
             "bytesUsed" = cap."bytesUsed" + $2::bigint + cap."reserve",
             "tokensUsed" = cap."tokensUsed" + $6::bigint
        FROM cap
       WHERE c."id" = cap."id"${
         withClaim
           ? `
         AND EXISTS (SELECT 1 FROM claim)`
           : ""
       }
         AND ${eligibleSql("cap", { taskId: "$3::uuid", channel: "$4::text", operation: "$5::text", bytes: "$2::bigint" })}
         AND cap."requestCount" < cap."maxRequests"
         AND cap."bytesUsed" + $2::bigint <= cap."maxBytes"
         AND cap."tokensUsed" + $6::bigint <= cap."maxTokens"
      RETURNING c."id"
    )
    SELECT cap.*, EXISTS (SELECT 1 FROM admitted) AS "isAdmitted",${withClaim ? ` (SELECT "id" FROM claim) AS "claimedId",` : ""}
           (SELECT max(v."version") FROM "SettingVersion" v WHERE v."key" = 'relay.upstream') AS "upstreamVersion"
      FROM cap`;
}

const ADMIT_ONE_SQL = admitOneSql(false);
const ADMIT_MAILBOX_SQL = admitOneSql(true);
