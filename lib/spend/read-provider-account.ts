/**
 * The provider account as the operator dashboard shows it: status (the local substrate says it is
 * not a VM), headroom and its source, and the low-balance warning. Unreadable = shown as such.
 */
import type { Substrate } from "../substrate/substrate";
import { computeAccountHeadroom } from "./account-headroom";

export type TProviderAccountView =
  | { kind: "ok"; status: string; headroomMicros: number; source: string; isLowBalance: boolean; label: string }
  | { kind: "unobservable"; status: string; reason: string; label: string }
  | { kind: "unreachable"; reason: string; label: string };

export async function readProviderAccount(substrate: Substrate): Promise<TProviderAccountView> {
  try {
    const account = await substrate.account();
    const headroom = computeAccountHeadroom(account);
    if (headroom.kind === "unobservable")
      return { kind: "unobservable", status: account.status, reason: headroom.reason, label: substrate.label };
    return {
      kind: "ok",
      status: account.status,
      headroomMicros: headroom.headroomMicros,
      source: headroom.source,
      isLowBalance: headroom.isLowBalance,
      label: substrate.label,
    };
  } catch (error) {
    return {
      kind: "unreachable",
      reason: error instanceof Error ? error.message : "unknown error",
      label: substrate.label,
    };
  }
}
