/**
 * Spend as the operator sees it: reserved and spent against the ceilings, and the latest ledger rows.
 */
import type { Db } from "../db/client";
import { readSetting } from "../settings/operator-settings";

export async function readSpendSummary(db: Db) {
  const [account, ceilings, recent] = await Promise.all([
    db.spendAccount.findUnique({ where: { scope: "global" } }),
    readSetting(db, "spend.ceilings"),
    db.spendLedgerEntry.findMany({ orderBy: { id: "desc" }, take: 20 }),
  ]);
  return {
    reservedMicros: Number(account?.reservedMicros ?? 0n),
    spentMicros: Number(account?.spentMicros ?? 0n),
    ceilings,
    recent: recent.map((e) => ({ id: e.id.toString(), kind: e.kind, amountMicros: Number(e.amountMicros), machineId: e.machineId, taskId: e.taskId, note: e.note, createdAt: e.createdAt })),
  };
}
