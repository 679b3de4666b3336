/**
 * The relay's SQL. Every budget decision is one conditional UPDATE on the capability row, so the
 * row lock serialises concurrent callers and no read-then-write gap exists for them to overshoot
 * through. A successful call is two statements: admission (admitCallByHash) and settlement
 * (settleCall), both prepared statements on the client's pg pool (Prisma's per-query work was
 * several times their own cost, issue 16), both shared by the calls that arrive together
 * (statement-batcher.ts). A call that arrives alone goes as a one-call statement: the batch form's
 * unnest, window and join machinery made a lone call's admission + settlement 0.25–0.5 ms slower
 * (1.2–1.5 against 0.9–1.1 ms, one client, this 2-core VM). Both forms judge with the same SQL
 * conditions (eligibleSql, deliverableSql), and a test holds them to the same answers. Admission
 * is durable; an HTTP settlement does not wait for its WAL flush (see SETTLE_BATCH_SQL). Nothing
 * here caches: revocation and counters are read on every call.
 */
import { pgPoolOf, type Db } from "../db/client";
import { Prisma } from "../db/generated/client";
import type { TCapabilityState } from "./admission";
import { createStatementBatcher } from "./statement-batcher";
import { RELAY_MAX_REASON_CHARS, RELAY_MAX_RECORDED_REFUSALS } from "./limits";

const CAPABILITY_COLUMNS = `c."id", c."taskId", c."allowedOps", c."maxRequests", c."maxBytes", c."maxRequestBytes", c."maxResponseBytes", c."requestCount", c."bytesUsed", c."maxTokens", c."tokensUsed", c."inputMicrosPerMTok", c."outputMicrosPerMTok", c."deadlineAt", c."revokedAt", c."revokedReason", now() AS "dbNow"`;

type TRawCapability = Omit<TCapabilityState, "allowedOps"> & { allowedOps: string[] | null };

function toState(row: TRawCapability): TCapabilityState {
  return {
    ...row,
    allowedOps: row.allowedOps ?? [],
    maxBytes: BigInt(row.maxBytes),
    bytesUsed: BigInt(row.bytesUsed),
    maxTokens: BigInt(row.maxTokens),
    tokensUsed: BigInt(row.tokensUsed),
  };
}

/** The capability and its task's relay channel; used where a call must be recorded before admission (refusals, mailbox claims). */
export async function findCapabilityByHash(db: Db, handleHash: string): Promise<(TCapabilityState & { relayChannel: string }) | null> {
  const rows = await db.$queryRawUnsafe<(TRawCapability & { relayChannel: string })[]>(
    `SELECT ${CAPABILITY_COLUMNS}, t."relayChannel" FROM "RelayCapability" c JOIN "Task" t ON t."id" = c."taskId" WHERE c."handleHash" = $1`,
    handleHash,
  );
  const row = rows[0];
  if (!row) return null;
  const { relayChannel, ...cap } = row;
  return { ...toState(cap), relayChannel };
}

export type TCounters = {
  requestCount: number;
  bytesUsed: bigint;
  maxRequests: number;
  maxBytes: bigint;
  tokensUsed: bigint;
  maxTokens: bigint;
};

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
  return batchersOf(db).admit.submit(call);
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
    values: [call.handleHash, String(call.requestBytes), call.taskId, call.channel, call.operation, String(call.tokenBound)],
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

/** A deadlock (with a statement that locked several of the same rows in another order) is retried: nothing of it was applied. */
async function retryOnDeadlock<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (attempt >= 3 || (error as { code?: unknown }).code !== "40P01") throw error;
    }
  }
}

/**
 * Statement batchers per client: the relay's group commit (statement-batcher.ts). One statement of
 * each kind in flight: at 64 concurrent calls that made batches larger and cost PostgreSQL 35–40 %
 * less CPU per call than two in flight (`npm run bench:relay`: 123–142 against 194–222 µs per
 * call, 15–18 % more calls per second); a lone call still goes at once.
 */
const batchersByDb = new WeakMap<Db, ReturnType<typeof createBatchers>>();

function createBatchers(db: Db) {
  return {
    admit: createStatementBatcher<TAdmissionRequest, TAdmission | null>({
      run: async (calls) => (calls.length === 1 ? [await admitAlone(db, calls[0]!)] : admitBatch(db, calls)),
      maxInFlight: 1,
      maxBatch: 256,
    }),
    settle: createStatementBatcher<TUnclaimedSettlement, TSettlement | null>({
      run: async (calls) => (calls.length === 1 ? [await settleAlone(db, calls[0]!)] : settleBatch(db, calls)),
      maxInFlight: 1,
      maxBatch: 256,
    }),
  };
}

function batchersOf(db: Db): ReturnType<typeof createBatchers> {
  let batchers = batchersByDb.get(db);
  if (!batchers) batchersByDb.set(db, (batchers = createBatchers(db)));
  return batchers;
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
    values: [call.handleHash, String(call.requestBytes), call.taskId, "mailbox", call.operation, String(call.tokenBound), call.sequence],
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

export type TSettlement = TCounters & {
  isDelivered: boolean;
  deadlineAt: Date;
  revokedAt: Date | null;
  revokedReason: string | null;
  dbNow: Date;
};

/**
 * Settlement, the second statement: releases the call's response reservation, charges the actual
 * response if it is delivered, and writes the call row (the mailbox's claimed row is finished
 * instead) — one commit. A delivery is withheld (only the request stays charged) when the
 * capability was revoked for anything but exhaustion, or its deadline passed, while the upstream
 * answered: an `exhausted:` revocation still lets an admitted call finish, since its response was
 * reserved. `deliver` false settles a call refused after admission (upstream failure, response
 * too large): nothing but the request is charged and `record.outcome` is kept.
 */
export async function settleCall(
  db: Db,
  call: {
    capabilityId: string;
    reservedResponseBytes: number;
    deliver: boolean;
    responseBytes: number;
    tokens: TTokenSettlement;
    record: TCallRecord;
    claimedId?: bigint;
  },
): Promise<TSettlement | null> {
  if (call.claimedId === undefined) return batchersOf(db).settle.submit(call);
  const { rows } = await pgPoolOf(db).query<TRawSettlement>({
    name: "relay_settle_claimed_v3",
    text: SETTLE_CLAIMED_SQL,
    values: [...settleOneValues(call), String(call.claimedId)],
  });
  return rows[0] ? toSettlement(rows[0]) : null;
}

/** A lone HTTP call's settlement: the one-call statement (see the module comment). */
export async function settleAlone(db: Db, call: TUnclaimedSettlement): Promise<TSettlement | null> {
  const { record } = call;
  const { rows } = await pgPoolOf(db).query<TRawSettlement>({
    name: "relay_settle_one_v2",
    text: SETTLE_ONE_SQL,
    values: [...settleOneValues(call), record.channel, record.sequence, record.operation],
  });
  return rows[0] ? toSettlement(rows[0]) : null;
}

function settleOneValues(call: TUnclaimedSettlement): unknown[] {
  const { record } = call;
  return [
    String(call.reservedResponseBytes),
    String(call.responseBytes),
    call.capabilityId,
    record.outcome,
    record.requestBytes,
    record.responseBytes,
    record.durationMs,
    call.deliver,
    String(call.tokens.reserved),
    String(call.tokens.charged),
    call.tokens.inputTokens,
    call.tokens.outputTokens,
    String(call.tokens.costMicros),
  ];
}

/**
 * A call's tokens at settlement: its reservation is released and what it used is charged — even
 * when its response is withheld, since the upstream spent them. `charged` is the reported total
 * (never more than the reservation) or the whole reservation when the upstream reported nothing.
 */
export type TTokenSettlement = {
  reserved: number;
  charged: number;
  inputTokens: number | null;
  outputTokens: number | null;
  costMicros: number;
};

export type TUnclaimedSettlement = {
  capabilityId: string;
  reservedResponseBytes: number;
  deliver: boolean;
  responseBytes: number;
  tokens: TTokenSettlement;
  record: TCallRecord;
};

type TRawSettlement = Omit<TSettlement, "bytesUsed" | "maxBytes" | "tokensUsed" | "maxTokens"> & {
  bytesUsed: string;
  maxBytes: string;
  tokensUsed: string;
  maxTokens: string;
};

function toSettlement(row: TRawSettlement): TSettlement {
  return {
    ...row,
    bytesUsed: BigInt(row.bytesUsed),
    maxBytes: BigInt(row.maxBytes),
    tokensUsed: BigInt(row.tokensUsed),
    maxTokens: BigInt(row.maxTokens),
  };
}

/**
 * The settlement of a batch of calls in one statement: per capability (locked in id order) the
 * reservations of all its calls are released and the delivered responses charged, and one call
 * row per call is written. Whether a response is delivered is judged per capability, as for a lone
 * call. Each answer carries the capability's counters after the whole batch.
 */
export async function settleBatch(db: Db, calls: readonly TUnclaimedSettlement[]): Promise<(TSettlement | null)[]> {
  const { rows } = await retryOnDeadlock(() =>
    pgPoolOf(db).query<TRawSettlement & { ord: string }>({
      name: "relay_settle_batch_v3",
      text: SETTLE_BATCH_SQL,
      values: [
        calls.map((c) => c.capabilityId),
        calls.map((c) => String(c.reservedResponseBytes)),
        calls.map((c) => c.deliver),
        calls.map((c) => String(c.responseBytes)),
        calls.map((c) => c.record.outcome),
        calls.map((c) => c.record.requestBytes),
        calls.map((c) => c.record.responseBytes),
        calls.map((c) => c.record.durationMs),
        calls.map((c) => c.record.channel),
        calls.map((c) => c.record.sequence),
        calls.map((c) => c.record.operation),
        calls.map((c) => String(c.tokens.reserved)),
        calls.map((c) => String(c.tokens.charged)),
        calls.map((c) => c.tokens.inputTokens),
        calls.map((c) => c.tokens.outputTokens),
        calls.map((c) => String(c.tokens.costMicros)),
      ],
    }),
  );
  const answers: (TSettlement | null)[] = calls.map(() => null);
  for (const { ord, ...row } of rows) answers[Number(ord) - 1] = toSettlement(row);
  return answers;
}

// $1 capability ids, $2 reserved response bytes, $3 deliver, $4 response bytes, $5 outcomes,
// $6 request bytes, $7 response bytes recorded, $8 durations, $9 channels, $10 sequences,
// $11 operations, $12 reserved tokens, $13 charged tokens, $14 reported input tokens, $15 reported output
// tokens, $16 cost: one element per call. A withheld delivery is recorded as RELAY_REFUSED with no
// response bytes (nothing was charged for it).
// The settlement commits without waiting for its WAL flush (synchronous_commit off for this one
// transaction; `relaxed`): it is visible at once, and only a PostgreSQL crash within the WAL
// writer's delay (≤ 3 × 200 ms) could lose it — which leaves the call's worst-case reservation
// charged (never less than it used) and loses its call row. Admission, which is what could
// overspend a budget, always waits for its flush. This halves the durable commits per call.
const SETTLE_BATCH_SQL = `
    WITH req AS (
      SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::boolean[], $4::bigint[], $5::text[], $6::int[], $7::int[], $8::int[], $9::text[], $10::int[], $11::text[],
                           $12::bigint[], $13::bigint[], $14::int[], $15::int[], $16::bigint[])
          WITH ORDINALITY AS r("capId", "reserved", "deliver", "responseBytes", "outcome", "requestBytes", "recordedResponseBytes", "durationMs", "channel", "sequence", "operation",
                               "reservedTokens", "chargedTokens", "inputTokens", "outputTokens", "costMicros", "ord")
    ), locked AS (
      SELECT c."id", ${deliverableSql("c")} AS "isDeliverable"
        FROM "RelayCapability" c
       WHERE c."id" IN (SELECT "capId" FROM req)
       ORDER BY c."id"
         FOR UPDATE
    ), judged AS (
      SELECT req.*, (req."deliver" AND l."isDeliverable") AS "isDelivered" FROM req JOIN locked l ON l."id" = req."capId"
    ), totals AS (
      SELECT "capId", sum("reserved") AS "released", sum(CASE WHEN "isDelivered" THEN "responseBytes" ELSE 0 END) AS "charged",
             sum("chargedTokens" - "reservedTokens") AS "tokenDelta"
        FROM judged GROUP BY "capId"
    ), settled AS (
      UPDATE "RelayCapability" c
         SET "bytesUsed" = c."bytesUsed" - t."released" + t."charged", "tokensUsed" = c."tokensUsed" + t."tokenDelta"
        FROM totals t
       WHERE c."id" = t."capId"
      RETURNING c."id", c."requestCount", c."bytesUsed", c."maxRequests", c."maxBytes", c."tokensUsed", c."maxTokens", c."deadlineAt", c."revokedAt",
                c."revokedReason", now() AS "dbNow"
    ), recorded AS (
      INSERT INTO "RelayCall" ("capabilityId", "channel", "sequence", "operation", "outcome", "requestBytes", "responseBytes", "durationMs",
                               "inputTokens", "outputTokens", "tokensCharged", "costMicros")
      SELECT j."capId", j."channel", j."sequence", j."operation",
             CASE WHEN j."isDelivered" OR NOT j."deliver" THEN j."outcome" ELSE 'RELAY_REFUSED' END,
             j."requestBytes", CASE WHEN j."isDelivered" THEN j."recordedResponseBytes" ELSE 0 END, j."durationMs",
             j."inputTokens", j."outputTokens", j."chargedTokens", j."costMicros"
        FROM judged j ORDER BY j."ord"
    ), relaxed AS (
      SELECT set_config('synchronous_commit', 'off', true) AS "setting"
    )
    SELECT j."ord", j."isDelivered", s."requestCount", s."bytesUsed", s."maxRequests", s."maxBytes", s."tokensUsed", s."maxTokens", s."deadlineAt",
           s."revokedAt", s."revokedReason", s."dbNow"
      FROM judged j JOIN settled s ON s."id" = j."capId" CROSS JOIN relaxed`;

/**
 * Whether an admitted call's response may still be delivered, judged on the capability row `cap`
 * at settlement: not revoked (an `exhausted:` revocation lets calls admitted before it finish) and
 * not past its deadline. Every settlement form judges with it.
 */
function deliverableSql(cap: string): string {
  return `(${cap}."deadlineAt" > now() AND (${cap}."revokedAt" IS NULL OR ${cap}."revokedReason" LIKE 'exhausted:%'))`;
}

/**
 * A lone call's settlement: $1 reserved response bytes, $2 response bytes, $3 capability id,
 * $4 outcome, $5 request bytes, $6 response bytes recorded, $7 duration, $8 deliver, $9 reserved
 * tokens, $10 charged tokens, $11 reported input tokens, $12 reported output tokens, $13 cost; then
 * either the new call row's $14 channel, $15 sequence, $16 operation (HTTP: committed without
 * waiting for its flush, as SETTLE_BATCH_SQL says why), or $14 the mailbox row its admission
 * claimed, finished here (durable). Judged as the batch form judges one call.
 */
function settleOneSql(record: "insert" | "finishClaimed"): string {
  const deliverable = `($8::boolean AND ${deliverableSql("c")})`;
  const outcome = `CASE WHEN s."isDelivered" OR NOT $8::boolean THEN $4::text ELSE 'RELAY_REFUSED' END`;
  const recordedResponseBytes = `CASE WHEN s."isDelivered" THEN $6::int ELSE 0 END`;
  const recorded =
    record === "insert"
      ? `INSERT INTO "RelayCall" ("capabilityId", "channel", "sequence", "operation", "outcome", "requestBytes", "responseBytes", "durationMs",
                               "inputTokens", "outputTokens", "tokensCharged", "costMicros")
      SELECT s."id", $14::text, $15::int, $16::text, ${outcome}, $5::int, ${recordedResponseBytes}, $7::int, $11::int, $12::int, $10::int, $13::bigint
        FROM settled s`
      : `UPDATE "RelayCall"
         SET "outcome" = ${outcome}, "requestBytes" = $5::int, "responseBytes" = ${recordedResponseBytes}, "durationMs" = $7::int,
             "inputTokens" = $11::int, "outputTokens" = $12::int, "tokensCharged" = $10::int, "costMicros" = $13::bigint
        FROM settled s
       WHERE "RelayCall"."id" = $14::bigint`;
  const isRelaxed = record === "insert";
  return `
    WITH settled AS (
      UPDATE "RelayCapability" c
         SET "bytesUsed" = c."bytesUsed" - $1::bigint + CASE WHEN ${deliverable} THEN $2::bigint ELSE 0 END,
             "tokensUsed" = c."tokensUsed" - $9::bigint + $10::bigint
       WHERE c."id" = $3::uuid
      RETURNING c."id", c."requestCount", c."bytesUsed", c."maxRequests", c."maxBytes", c."tokensUsed", c."maxTokens", c."deadlineAt", c."revokedAt",
                c."revokedReason", now() AS "dbNow", ${deliverable} AS "isDelivered"
    ), recorded AS (
      ${recorded}
    )${
      isRelaxed
        ? `, relaxed AS (
      SELECT set_config('synchronous_commit', 'off', true) AS "setting"
    )`
        : ""
    }
    SELECT s."isDelivered", s."requestCount", s."bytesUsed", s."maxRequests", s."maxBytes", s."tokensUsed", s."maxTokens", s."deadlineAt", s."revokedAt",
           s."revokedReason", s."dbNow"
      FROM settled s${isRelaxed ? " CROSS JOIN relaxed" : ""}`;
}

const SETTLE_ONE_SQL = settleOneSql("insert");
const SETTLE_CLAIMED_SQL = settleOneSql("finishClaimed");

/**
 * Idempotent and permanent: nothing un-revokes, and a revoked row keeps its first reason — with
 * one exception. An `exhausted:` revocation lets calls admitted before it finish; a terminal
 * revocation (task end, operator) that comes after it must still be recorded and stop them, so it
 * replaces the exhaustion reason (keeping it in the text: "<reason> (after exhausted:…)").
 */
export async function revokeCapabilityRows(db: Db, target: { capabilityId?: string; taskId?: string }, reason: string): Promise<string[]> {
  if (!target.capabilityId && !target.taskId) return [];
  const isTerminal = !reason.startsWith("exhausted:");
  const where = target.capabilityId ? Prisma.sql`"id" = ${target.capabilityId}::uuid` : Prisma.sql`"taskId" = ${target.taskId}::uuid`;
  const rows = await db.$queryRaw<{ id: string }[]>`
      UPDATE "RelayCapability"
         SET "revokedAt" = now(),
             "revokedReason" = CASE WHEN "revokedAt" IS NULL THEN ${reason}
                                    ELSE left(${reason} || ' (after ' || "revokedReason" || ')', ${RELAY_MAX_REASON_CHARS}) END
       WHERE ${where}
         AND ("revokedAt" IS NULL OR (${isTerminal} AND "revokedReason" LIKE 'exhausted:%'))
      RETURNING "id"`;
  return rows.map((r) => r.id);
}

/** A RelayCall row: counts and outcome, never payloads. Byte fields are what the call CHARGED to the budget. */
export type TCallRecord = {
  capabilityId: string;
  channel: string;
  sequence: number | null;
  operation: string;
  outcome: string;
  requestBytes: number;
  responseBytes: number;
  durationMs: number;
};

/**
 * Claims a mailbox sequence before anything else happens to it: the unique
 * (capabilityId, channel, sequence) index makes a re-polled request lose the race here, so it is
 * never admitted or sent upstream a second time. Returns the new row's id, or the outcome the
 * first claim recorded.
 */
export async function claimMailboxSequence(
  db: Db,
  record: TCallRecord & { sequence: number },
): Promise<{ kind: "claimed"; id: bigint } | { kind: "duplicate"; previousOutcome: string }> {
  const inserted = await db.$queryRaw<{ id: bigint }[]>`
    INSERT INTO "RelayCall" ("capabilityId", "channel", "sequence", "operation", "outcome", "requestBytes", "responseBytes", "durationMs")
    VALUES (${record.capabilityId}::uuid, ${record.channel}, ${record.sequence}, ${record.operation}, ${record.outcome}, ${record.requestBytes}, ${record.responseBytes}, ${record.durationMs})
    ON CONFLICT ("capabilityId", "channel", "sequence") DO NOTHING
    RETURNING "id"`;
  if (inserted[0]) return { kind: "claimed", id: BigInt(inserted[0].id) };
  const previous = await db.relayCall.findFirst({
    where: { capabilityId: record.capabilityId, channel: record.channel, sequence: record.sequence },
    select: { outcome: true },
  });
  return { kind: "duplicate", previousOutcome: previous?.outcome ?? "pending" };
}

export async function finishCallRecord(
  db: Db,
  id: bigint,
  fields: Pick<TCallRecord, "outcome" | "requestBytes" | "responseBytes" | "durationMs">,
): Promise<void> {
  await db.relayCall.update({ where: { id }, data: fields });
}

/**
 * Refused calls spend no budget, so a hostile guest could make them forever: past
 * RELAY_MAX_RECORDED_REFUSALS rows per capability they are answered but no longer recorded (the
 * count check and insert are one statement; concurrent callers can pass it by at most their number).
 */
export async function recordRefusedCall(db: Db, record: TCallRecord): Promise<void> {
  await db.$executeRaw`
    INSERT INTO "RelayCall" ("capabilityId", "channel", "sequence", "operation", "outcome", "requestBytes", "responseBytes", "durationMs")
    SELECT ${record.capabilityId}::uuid, ${record.channel}, ${record.sequence}, ${record.operation}, ${record.outcome}, ${record.requestBytes}, ${record.responseBytes}, ${record.durationMs}
     WHERE (SELECT count(*) FROM (SELECT 1 FROM "RelayCall" WHERE "capabilityId" = ${record.capabilityId}::uuid AND "outcome" NOT LIKE 'ok:%' LIMIT ${RELAY_MAX_RECORDED_REFUSALS}) AS recent) < ${RELAY_MAX_RECORDED_REFUSALS}`;
}
