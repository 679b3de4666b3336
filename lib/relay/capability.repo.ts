/**
 * The relay's SQL. Every budget decision is one conditional UPDATE on the capability row, so the
 * row lock serialises concurrent callers and no read-then-write gap exists for them to overshoot
 * through. Nothing here caches: revocation and counters are read from the database on every call.
 */
import type { Db } from "../db/client";
import { Prisma } from "../db/generated/client";
import type { TCapabilityState } from "./admission";
import { RELAY_MAX_REASON_CHARS, RELAY_MAX_RECORDED_REFUSALS } from "./limits";

const CAPABILITY_COLUMNS = `"id", "taskId", "allowedOps", "maxRequests", "maxBytes", "maxRequestBytes", "maxResponseBytes", "requestCount", "bytesUsed", "deadlineAt", "revokedAt", "revokedReason", now() AS "dbNow"`;

type TRawCapability = Omit<TCapabilityState, "allowedOps"> & { allowedOps: string[] | null };

function toState(row: TRawCapability): TCapabilityState {
  return { ...row, allowedOps: row.allowedOps ?? [], maxBytes: BigInt(row.maxBytes), bytesUsed: BigInt(row.bytesUsed) };
}

export async function findCapabilityByHash(db: Db, handleHash: string): Promise<TCapabilityState | null> {
  const rows = await db.$queryRawUnsafe<TRawCapability[]>(`SELECT ${CAPABILITY_COLUMNS} FROM "RelayCapability" WHERE "handleHash" = $1`, handleHash);
  return rows[0] ? toState(rows[0]) : null;
}

export async function findCapabilityById(db: Db, id: string): Promise<TCapabilityState | null> {
  const rows = await db.$queryRawUnsafe<TRawCapability[]>(`SELECT ${CAPABILITY_COLUMNS} FROM "RelayCapability" WHERE "id" = $1::uuid`, id);
  return rows[0] ? toState(rows[0]) : null;
}

export type TCounters = { requestCount: number; bytesUsed: bigint; maxRequests: number; maxBytes: bigint };

/**
 * Admission: reserves one request slot and the request's bytes, or changes nothing. Every
 * condition of the capability contract is in this one WHERE clause; it is the decision.
 */
export async function admitCall(db: Db, call: { capabilityId: string; taskId: string; operation: string; requestBytes: number }): Promise<TCounters | null> {
  const rows = await db.$queryRaw<TCounters[]>`
    UPDATE "RelayCapability"
       SET "requestCount" = "requestCount" + 1,
           "bytesUsed" = "bytesUsed" + ${BigInt(call.requestBytes)}
     WHERE "id" = ${call.capabilityId}::uuid
       AND "taskId" = ${call.taskId}::uuid
       AND "revokedAt" IS NULL
       AND "deadlineAt" > now()
       AND ${call.operation} = ANY("allowedOps")
       AND ${call.requestBytes} <= "maxRequestBytes"
       AND "requestCount" < "maxRequests"
       AND "bytesUsed" + ${BigInt(call.requestBytes)} <= "maxBytes"
    RETURNING "requestCount", "bytesUsed", "maxRequests", "maxBytes"`;
  return rows[0] ?? null;
}

/**
 * Charges a response against the byte budget and records the successful call, in one statement
 * (one commit: the row lock on the capability is held for one WAL flush, not two), or changes
 * nothing. An `exhausted:` revocation (raced by another call) still lets an admitted call finish
 * if its response fits; any other revocation (task ended, operator) or a deadline passed while
 * the upstream answered withholds the response.
 * `claimedId` is the mailbox row claimed earlier, finished here instead of inserting a new one.
 */
export async function chargeResponseAndRecord(db: Db, call: { capabilityId: string; responseBytes: number; record: TCallRecord; claimedId?: bigint }): Promise<TCounters | null> {
  const { record } = call;
  const charged = Prisma.sql`
      UPDATE "RelayCapability"
         SET "bytesUsed" = "bytesUsed" + ${BigInt(call.responseBytes)}
       WHERE "id" = ${call.capabilityId}::uuid
         AND "bytesUsed" + ${BigInt(call.responseBytes)} <= "maxBytes"
         AND "deadlineAt" > now()
         AND ("revokedAt" IS NULL OR "revokedReason" LIKE 'exhausted:%')
      RETURNING "requestCount", "bytesUsed", "maxRequests", "maxBytes"`;
  // A new row for the HTTP channel; the mailbox's claimed row is finished instead.
  const recorded =
    call.claimedId === undefined
      ? Prisma.sql`
      INSERT INTO "RelayCall" ("capabilityId", "channel", "sequence", "operation", "outcome", "requestBytes", "responseBytes", "durationMs")
      SELECT ${record.capabilityId}::uuid, ${record.channel}, ${record.sequence}, ${record.operation}, ${record.outcome}, ${record.requestBytes}, ${record.responseBytes}, ${record.durationMs}
        FROM charged`
      : Prisma.sql`
      UPDATE "RelayCall"
         SET "outcome" = ${record.outcome}, "requestBytes" = ${record.requestBytes}, "responseBytes" = ${record.responseBytes}, "durationMs" = ${record.durationMs}
       WHERE "id" = ${call.claimedId} AND EXISTS (SELECT 1 FROM charged)`;
  const rows = await db.$queryRaw<TCounters[]>`WITH charged AS (${charged}), recorded AS (${recorded}) SELECT * FROM charged`;
  return rows[0] ?? null;
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
  const previous = await db.relayCall.findFirst({ where: { capabilityId: record.capabilityId, channel: record.channel, sequence: record.sequence }, select: { outcome: true } });
  return { kind: "duplicate", previousOutcome: previous?.outcome ?? "pending" };
}

export async function finishCallRecord(db: Db, id: bigint, fields: Pick<TCallRecord, "outcome" | "requestBytes" | "responseBytes" | "durationMs">): Promise<void> {
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
