/**
 * The relay's SQL. Every budget decision is one conditional UPDATE on the capability row, so the
 * row lock serialises concurrent callers and no read-then-write gap exists for them to overshoot
 * through. A successful call is two statements: admission (admitCallByHash) and settlement
 * (settleCall), both prepared statements on the client's pg pool (Prisma's per-query work was
 * several times their own cost, issue 16). Nothing here caches: revocation and counters are read
 * on every call.
 */
import { pgPoolOf, type Db } from "../db/client";
import { Prisma } from "../db/generated/client";
import type { TCapabilityState } from "./admission";
import { RELAY_MAX_REASON_CHARS, RELAY_MAX_RECORDED_REFUSALS } from "./limits";

const CAPABILITY_COLUMNS = `c."id", c."taskId", c."allowedOps", c."maxRequests", c."maxBytes", c."maxRequestBytes", c."maxResponseBytes", c."requestCount", c."bytesUsed", c."deadlineAt", c."revokedAt", c."revokedReason", now() AS "dbNow"`;

type TRawCapability = Omit<TCapabilityState, "allowedOps"> & { allowedOps: string[] | null };

function toState(row: TRawCapability): TCapabilityState {
  return { ...row, allowedOps: row.allowedOps ?? [], maxBytes: BigInt(row.maxBytes), bytesUsed: BigInt(row.bytesUsed) };
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

export type TCounters = { requestCount: number; bytesUsed: bigint; maxRequests: number; maxBytes: bigint };

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
export async function admitCallByHash(
  db: Db,
  call: { handleHash: string; taskId: string; operation: string; requestBytes: number; channel: string },
): Promise<TAdmission | null> {
  const { rows } = await pgPoolOf(db).query<TRawAdmission>({
    name: "relay_admit_v1",
    text: admissionSql({ isMailboxClaim: false }),
    values: [call.handleHash, String(call.requestBytes), call.taskId, call.channel, call.operation],
  });
  return rows[0] ? toAdmission(rows[0]) : null;
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
  call: { handleHash: string; taskId: string; operation: string; requestBytes: number; sequence: number },
): Promise<TMailboxAdmission | null> {
  const { rows } = await pgPoolOf(db).query<TRawAdmission & { claimedId: string | null }>({
    name: "relay_admit_mailbox_v1",
    text: admissionSql({ isMailboxClaim: true }),
    values: [call.handleHash, String(call.requestBytes), call.taskId, "mailbox", call.operation, call.sequence],
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
 * $1 handle hash, $2 request bytes, $3 task id, $4 channel, $5 operation (a known name or
 * "unknown"); with the mailbox claim, $6 the sequence. Named (prepared) statements: parsed and
 * planned once per connection.
 */
function admissionSql({ isMailboxClaim }: { isMailboxClaim: boolean }): string {
  const claim = isMailboxClaim
    ? `, claim AS (
      INSERT INTO "RelayCall" ("capabilityId", "channel", "sequence", "operation", "outcome", "requestBytes", "responseBytes", "durationMs")
      SELECT cap."id", $4::text, $6::int, $5::text, 'pending', 0, 0, 0 FROM cap WHERE cap."taskId" = $3::uuid
      ON CONFLICT ("capabilityId", "channel", "sequence") DO NOTHING
      RETURNING "id"
    )`
    : "";
  return `
    WITH cap AS (
      SELECT c."id", c."taskId", c."allowedOps", c."maxRequests", c."maxBytes", c."maxRequestBytes", c."maxResponseBytes",
             c."requestCount", c."bytesUsed", c."deadlineAt", c."revokedAt", c."revokedReason", now() AS "dbNow", t."relayChannel",
             LEAST(c."maxResponseBytes"::bigint, c."maxBytes" - c."bytesUsed" - $2::bigint) AS "reserve"
        FROM "RelayCapability" c JOIN "Task" t ON t."id" = c."taskId"
       WHERE c."handleHash" = $1::text
         FOR UPDATE OF c
    )${claim}, admitted AS (
      UPDATE "RelayCapability" c
         SET "requestCount" = cap."requestCount" + 1,
             "bytesUsed" = cap."bytesUsed" + $2::bigint + cap."reserve"
        FROM cap
       WHERE c."id" = cap."id"
         AND cap."taskId" = $3::uuid
         AND ($4::text <> 'http' OR cap."relayChannel" = 'http')
         AND cap."revokedAt" IS NULL
         AND cap."deadlineAt" > now()
         AND $5::text = ANY(cap."allowedOps")
         AND $2::bigint <= cap."maxRequestBytes"
         AND cap."requestCount" < cap."maxRequests"
         AND cap."bytesUsed" + $2::bigint <= cap."maxBytes"${
           isMailboxClaim
             ? `
         AND EXISTS (SELECT 1 FROM claim)`
             : ""
         }
      RETURNING c."id"
    )
    SELECT cap.*, EXISTS (SELECT 1 FROM admitted) AS "isAdmitted",${isMailboxClaim ? ` (SELECT "id" FROM claim) AS "claimedId",` : ""}
           (SELECT max(v."version") FROM "SettingVersion" v WHERE v."key" = 'relay.upstream') AS "upstreamVersion"
      FROM cap`;
}

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
    record: TCallRecord;
    claimedId?: bigint;
  },
): Promise<TSettlement | null> {
  const { record } = call;
  const isClaimed = call.claimedId !== undefined;
  const values: unknown[] = [
    String(call.reservedResponseBytes),
    String(call.responseBytes),
    call.capabilityId,
    record.outcome,
    record.requestBytes,
    record.responseBytes,
    record.durationMs,
    ...(isClaimed ? [String(call.claimedId)] : [record.channel, record.sequence, record.operation]),
  ];
  const { rows } = await pgPoolOf(db).query<TRawSettlement>({
    name: `relay_settle_v1_${call.deliver ? "deliver" : "withhold"}_${isClaimed ? "claimed" : "new"}`,
    text: settleSql(call.deliver, isClaimed),
    values,
  });
  const row = rows[0];
  if (!row) return null;
  return { ...row, bytesUsed: BigInt(row.bytesUsed), maxBytes: BigInt(row.maxBytes) };
}

type TRawSettlement = Omit<TSettlement, "bytesUsed" | "maxBytes"> & { bytesUsed: string; maxBytes: string };

/**
 * $1 reserved response bytes, $2 response bytes, $3 capability id, $4 outcome, $5 request bytes,
 * $6 response bytes recorded, $7 duration; then $8 the claimed row's id, or $8–$10 channel,
 * sequence and operation of a new row. One text per (deliver, claimed) pair, each prepared once.
 */
function settleSql(deliver: boolean, isClaimed: boolean): string {
  const deliverable = deliver ? `("deadlineAt" > now() AND ("revokedAt" IS NULL OR "revokedReason" LIKE 'exhausted:%'))` : "false";
  // A withheld delivery is recorded as RELAY_REFUSED with no response bytes (nothing was charged for it).
  const outcome = deliver ? `CASE WHEN settled."isDelivered" THEN $4::text ELSE 'RELAY_REFUSED' END` : "$4::text";
  const charged = `CASE WHEN settled."isDelivered" THEN $6::int ELSE 0 END`;
  const recorded = isClaimed
    ? `UPDATE "RelayCall"
          SET "outcome" = ${outcome}, "requestBytes" = $5::int, "responseBytes" = ${charged}, "durationMs" = $7::int
         FROM settled
        WHERE "id" = $8::bigint`
    : `INSERT INTO "RelayCall" ("capabilityId", "channel", "sequence", "operation", "outcome", "requestBytes", "responseBytes", "durationMs")
       SELECT $3::uuid, $8::text, $9::int, $10::text, ${outcome}, $5::int, ${charged}, $7::int
         FROM settled`;
  return `
    WITH settled AS (
      UPDATE "RelayCapability"
         SET "bytesUsed" = "bytesUsed" - $1::bigint + CASE WHEN ${deliverable} THEN $2::bigint ELSE 0 END
       WHERE "id" = $3::uuid
      RETURNING "requestCount", "bytesUsed", "maxRequests", "maxBytes", "deadlineAt", "revokedAt", "revokedReason", now() AS "dbNow", ${deliverable} AS "isDelivered"
    ), recorded AS (${recorded})
    SELECT * FROM settled`;
}

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
