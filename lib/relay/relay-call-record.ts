/**
 * The RelayCall row a call leaves behind, shared by every path of relayCall (relay-call.ts) and of
 * an admitted call (relay-admitted-call.ts): the context a call carries, the refusal that records
 * itself (on the claimed mailbox row when there is one, else on a new row), and the guard that
 * never leaves a claimed mailbox row pending. Rows hold counts and outcome only, never payloads.
 */
import type { Db } from "../db/client";
import type { TCapabilityState, TRefusal } from "./admission";
import { finishCallRecord, recordRefusedCall, revokeCapabilityRows, type TCallRecord } from "./capability.repo";
import type { TRelayChannel } from "./limits";
import { refusalResult, type TRelayCallResult } from "./relay-response";

export type TCallContext = {
  db: Db;
  cap: TCapabilityState;
  channel: TRelayChannel;
  sequence: number | null;
  operation: string;
  startedAt: number;
  /** The claimed mailbox row, finished instead of inserting a new one. */
  claimedId?: bigint;
};

/** An unexpected failure (database gone) after a mailbox claim leaves the claimed row visibly failed, not pending. */
export async function finishingClaimOnFailure(
  context: TCallContext,
  body: () => Promise<TRelayCallResult>,
): Promise<TRelayCallResult> {
  try {
    return await body();
  } catch (error) {
    if (context.claimedId !== undefined)
      await finishCallRecord(context.db, context.claimedId, {
        outcome: "INTERNAL",
        requestBytes: 0,
        responseBytes: 0,
        durationMs: elapsed(context),
      }).catch(() => undefined);
    throw error;
  }
}

/** `chargedRequestBytes`: what admission already charged for this call (0 if it was never admitted). */
export async function refuse(
  context: TCallContext,
  refusal: TRefusal,
  chargedRequestBytes: number,
): Promise<TRelayCallResult> {
  if (refusal.revokeReason)
    await revokeCapabilityRows(context.db, { capabilityId: context.cap.id }, refusal.revokeReason);
  await recordRefusal(context, { outcome: refusal.code, requestBytes: chargedRequestBytes, responseBytes: 0 });
  return refusalResult(refusal.code, refusal.message);
}

async function recordRefusal(
  context: TCallContext,
  fields: { outcome: string; requestBytes: number; responseBytes: number },
): Promise<void> {
  const durationMs = elapsed(context);
  if (context.claimedId !== undefined)
    return finishCallRecord(context.db, context.claimedId, { ...fields, durationMs });
  return recordRefusedCall(context.db, { ...baseRecord(context), ...fields, durationMs });
}

export function baseRecord(context: TCallContext): TCallRecord {
  return {
    capabilityId: context.cap.id,
    channel: context.channel,
    sequence: context.sequence,
    operation: context.operation,
    outcome: "pending",
    requestBytes: 0,
    responseBytes: 0,
    durationMs: 0,
  };
}

export function elapsed(context: TCallContext): number {
  return Math.min(2_147_483_647, Math.round(performance.now() - context.startedAt));
}
