/**
 * Settlement, the second of a relay call's two statements (capability.repo.ts says why two, and
 * why prepared and shared): the lone-call, claimed-mailbox and batch forms, which judge delivery
 * with the same SQL condition (deliverableSql).
 */
import { pgPoolOf, type Db } from "../db/client";
import { retryOnDeadlock, type TCallRecord, type TCounters } from "./capability.repo";
import { createStatementBatcher, type TStatementBatcher } from "./statement-batcher";

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
  if (call.claimedId === undefined) return settleBatcherOf(db).submit(call);
  const { rows } = await pgPoolOf(db).query<TRawSettlement>({
    name: "relay_settle_claimed_v3",
    text: SETTLE_CLAIMED_SQL,
    values: [...settleOneValues(call), String(call.claimedId)],
  });
  return rows[0] ? toSettlement(rows[0]) : null;
}

/** Settlement statements per client, batched as admissions are (capability-admission.repo.ts says why one in flight). */
const settleBatchers = new WeakMap<Db, TStatementBatcher<TUnclaimedSettlement, TSettlement | null>>();

function settleBatcherOf(db: Db): TStatementBatcher<TUnclaimedSettlement, TSettlement | null> {
  let batcher = settleBatchers.get(db);
  if (!batcher) {
    batcher = createStatementBatcher<TUnclaimedSettlement, TSettlement | null>({
      run: async (calls) => (calls.length === 1 ? [await settleAlone(db, calls[0]!)] : settleBatch(db, calls)),
      maxInFlight: 1,
      maxBatch: 256,
    });
    settleBatchers.set(db, batcher);
  }
  return batcher;
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
