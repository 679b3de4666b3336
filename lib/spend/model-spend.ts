/**
 * Model spend in the ledger (issue 25), bounded like machine spend. A relay capability's worst
 * case — its whole token budget at the higher of its two prices — is reserved against every
 * ceiling when the capability is issued, before the guest can make a call, so no call can pass a
 * ceiling. Each call's exact cost is recorded on its RelayCall row by the relay's settlement (a
 * ledger row per call would put the global spend lock on the relay's hot path); when the
 * capability ends, the reservation is released and replaced by the usage: the calls' costs, plus
 * the worst case of any call still in flight (fail closed).
 */
import type { Db, DbTx } from "../db/client";
import { assertWithinCeilings, lockSpendAccount } from "./spend-guard";

const GLOBAL = "global";

export type TModelPrices = { inputMicrosPerMTok: number; outputMicrosPerMTok: number };

/** The most a token budget can cost: every token at the higher price, rounded up. */
export function modelWorstCaseMicros(maxTokens: number, prices: TModelPrices): number {
  return Math.ceil((maxTokens * Math.max(prices.inputMicrosPerMTok, prices.outputMicrosPerMTok)) / 1_000_000);
}

/** Reserves a capability's worst case inside the transaction that issues it; a ceiling it would pass refuses the issue. */
export async function reserveModelSpend(
  tx: DbTx,
  reservation: { capabilityId: string; taskId: string; amountMicros: number; now?: Date },
): Promise<void> {
  const { capabilityId, taskId, amountMicros } = reservation;
  if (amountMicros <= 0) return;
  const now = reservation.now ?? new Date();
  await lockSpendAccount(tx);
  await assertWithinCeilings(tx, { amountMicros, taskId, what: "this task's model budget", now });
  await tx.spendLedgerEntry.create({
    data: {
      kind: "reservation",
      resource: "model",
      amountMicros: BigInt(amountMicros),
      relayCapabilityId: capabilityId,
      taskId,
      note: "model budget: relay.maxTokens × the higher price",
      createdAt: now,
    },
  });
  await tx.spendAccount.update({
    where: { scope: GLOBAL },
    data: { reservedMicros: { increment: BigInt(amountMicros) } },
  });
  await tx.relayCapability.update({ where: { id: capabilityId }, data: { modelReservedMicros: BigInt(amountMicros) } });
}

/**
 * Closes a capability's model reservation (idempotent: a second call finds nothing reserved).
 * Usage = the recorded calls' costs + the worst case of tokens still reserved by calls in flight.
 */
export async function settleModelSpend(db: Db, capabilityId: string, note: string): Promise<void> {
  await db.$transaction(async (tx) => {
    await lockSpendAccount(tx);
    const [cap] = await tx.$queryRaw<
      {
        taskId: string;
        reserved: bigint;
        tokensUsed: bigint;
        inputMicrosPerMTok: number;
        outputMicrosPerMTok: number;
      }[]
    >`select "taskId", "modelReservedMicros" as reserved, "tokensUsed", "inputMicrosPerMTok", "outputMicrosPerMTok"
        from "RelayCapability" where "id" = ${capabilityId}::uuid for update`;
    if (!cap || cap.reserved === 0n) return;
    const [calls] = await tx.$queryRaw<{ cost: bigint; charged: bigint }[]>`
      select coalesce(sum("costMicros"), 0)::bigint as cost, coalesce(sum("tokensCharged"), 0)::bigint as charged
        from "RelayCall" where "capabilityId" = ${capabilityId}::uuid`;
    const inFlightTokens = cap.tokensUsed > calls!.charged ? Number(cap.tokensUsed - calls!.charged) : 0;
    const spent = calls!.cost + BigInt(modelWorstCaseMicros(inFlightTokens, cap));
    await tx.spendLedgerEntry.create({
      data: {
        kind: "release",
        resource: "model",
        amountMicros: cap.reserved,
        relayCapabilityId: capabilityId,
        taskId: cap.taskId,
        note,
      },
    });
    if (spent > 0n)
      await tx.spendLedgerEntry.create({
        data: {
          kind: "usage",
          resource: "model",
          amountMicros: spent,
          relayCapabilityId: capabilityId,
          taskId: cap.taskId,
          note:
            inFlightTokens > 0
              ? `${note} (${inFlightTokens} tokens of calls in flight counted at their worst case)`
              : note,
        },
      });
    await tx.spendAccount.update({
      where: { scope: GLOBAL },
      data: { reservedMicros: { decrement: cap.reserved }, spentMicros: { increment: spent } },
    });
    await tx.relayCapability.update({ where: { id: capabilityId }, data: { modelReservedMicros: 0n } });
  });
}
