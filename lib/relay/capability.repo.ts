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
 *
 * This file holds what both statements share (the capability row as read, the deadlock retry),
 * revocation and the call records; admission is capability-admission.repo.ts, settlement
 * capability-settlement.repo.ts.
 */
import type { Db } from "../db/client";
import { Prisma } from "../db/generated/client";
import type { TCapabilityState } from "./admission";
import { RELAY_MAX_REASON_CHARS, RELAY_MAX_RECORDED_REFUSALS } from "./limits";

const CAPABILITY_COLUMNS = `c."id", c."taskId", c."allowedOps", c."maxRequests", c."maxBytes", c."maxRequestBytes", c."maxResponseBytes", c."requestCount", c."bytesUsed", c."maxTokens", c."tokensUsed", c."inputMicrosPerMTok", c."outputMicrosPerMTok", c."deadlineAt", c."revokedAt", c."revokedReason", now() AS "dbNow"`;

export type TRawCapability = Omit<TCapabilityState, "allowedOps"> & { allowedOps: string[] | null };

export function toState(row: TRawCapability): TCapabilityState {
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
export async function findCapabilityByHash(
  db: Db,
  handleHash: string,
): Promise<(TCapabilityState & { relayChannel: string }) | null> {
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

/** A deadlock (with a statement that locked several of the same rows in another order) is retried: nothing of it was applied. */
export async function retryOnDeadlock<T>(run: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (attempt >= 3 || (error as { code?: unknown }).code !== "40P01") throw error;
    }
  }
}

/**
 * Idempotent and permanent: nothing un-revokes, and a revoked row keeps its first reason — with
 * one exception. An `exhausted:` revocation lets calls admitted before it finish; a terminal
 * revocation (task end, operator) that comes after it must still be recorded and stop them, so it
 * replaces the exhaustion reason (keeping it in the text: "<reason> (after exhausted:…)").
 */
export async function revokeCapabilityRows(
  db: Db,
  target: { capabilityId?: string; taskId?: string },
  reason: string,
): Promise<string[]> {
  if (!target.capabilityId && !target.taskId) return [];
  const isTerminal = !reason.startsWith("exhausted:");
  const where = target.capabilityId
    ? Prisma.sql`"id" = ${target.capabilityId}::uuid`
    : Prisma.sql`"taskId" = ${target.taskId}::uuid`;
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
