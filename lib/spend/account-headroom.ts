/**
 * How much the provider account can still spend (seed 001 finding D): `budgetRemainingMicros`
 * when the account states it, else `prepaidCreditMicros` (a soft budget policy answers null for
 * the budget). Neither observable = refuse: an unobservable budget is not an unlimited one.
 */
import type { TAccount } from "../contract/smolcloud-wire";

export type THeadroom =
  | {
      kind: "observed";
      headroomMicros: number;
      source: "budgetRemainingMicros" | "prepaidCreditMicros";
      isLowBalance: boolean;
      lowBalanceThresholdMicros: number | null;
    }
  | { kind: "unobservable"; reason: string };

export function computeAccountHeadroom(account: TAccount): THeadroom {
  const threshold = account.lowBalanceThresholdMicros ?? null;
  const observed = (source: "budgetRemainingMicros" | "prepaidCreditMicros", headroomMicros: number): THeadroom => ({
    kind: "observed",
    headroomMicros,
    source,
    lowBalanceThresholdMicros: threshold,
    isLowBalance: threshold !== null && headroomMicros <= threshold,
  });
  if (typeof account.budgetRemainingMicros === "number")
    return observed("budgetRemainingMicros", account.budgetRemainingMicros);
  if (typeof account.prepaidCreditMicros === "number")
    return observed("prepaidCreditMicros", account.prepaidCreditMicros);
  return { kind: "unobservable", reason: "the account states neither budgetRemainingMicros nor prepaidCreditMicros" };
}

/** Pessimistic cost of a machine living its whole TTL: rate × resources × ttl, rounded up. */
export function reservationMicros(options: {
  cpus: number;
  memoryMb: number;
  ttlSeconds: number;
  cpuHourMicros: number;
  memoryGbHourMicros: number;
}): number {
  const hours = options.ttlSeconds / 3600;
  return Math.ceil(
    (options.cpus * options.cpuHourMicros + (options.memoryMb / 1024) * options.memoryGbHourMicros) * hours,
  );
}
