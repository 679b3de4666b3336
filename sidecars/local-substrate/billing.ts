/**
 * Metered billing, pure. A machine is billed per second of existence (creation to deletion, whole
 * seconds rounded up) at the plan's cpu-hour and memory-GB-hour rates; money is integer
 * micro-dollars, as on the vendor's account. Exec is metered at $0, like the vendor.
 */

export type TBillingRates = { rateCpuHourMicros: number; rateMemoryGbHourMicros: number };

export type TMachineMeter = {
  totalUptimeSeconds: number;
  cpuHours: number;
  memoryGbHours: number;
  cpuMicros: number;
  memoryMicros: number;
  totalMicros: number;
};

export function meterMachine(
  resources: { cpus: number; memoryMb: number },
  fromMs: number,
  toMs: number,
  rates: TBillingRates,
): TMachineMeter {
  const totalUptimeSeconds = Math.max(0, Math.ceil((toMs - fromMs) / 1000));
  const cpuHours = (resources.cpus * totalUptimeSeconds) / 3600;
  const memoryGbHours = (resources.memoryMb / 1024) * (totalUptimeSeconds / 3600);
  const cpuMicros = Math.round(cpuHours * rates.rateCpuHourMicros);
  const memoryMicros = Math.round(memoryGbHours * rates.rateMemoryGbHourMicros);
  return {
    totalUptimeSeconds,
    cpuHours,
    memoryGbHours,
    cpuMicros,
    memoryMicros,
    totalMicros: cpuMicros + memoryMicros,
  };
}

export function addMeters(a: TMachineMeter, b: TMachineMeter): TMachineMeter {
  return {
    totalUptimeSeconds: a.totalUptimeSeconds + b.totalUptimeSeconds,
    cpuHours: a.cpuHours + b.cpuHours,
    memoryGbHours: a.memoryGbHours + b.memoryGbHours,
    cpuMicros: a.cpuMicros + b.cpuMicros,
    memoryMicros: a.memoryMicros + b.memoryMicros,
    totalMicros: a.totalMicros + b.totalMicros,
  };
}

export const ZERO_METER: TMachineMeter = {
  totalUptimeSeconds: 0,
  cpuHours: 0,
  memoryGbHours: 0,
  cpuMicros: 0,
  memoryMicros: 0,
  totalMicros: 0,
};

export type TBudgetPolicy = "hard" | "soft";

export type TAccountMoney = {
  prepaidCreditMicros: number;
  /** null under a soft policy, exactly like the real account in seed 001 finding D. */
  budgetRemainingMicros: number | null;
  monthlyBudgetMicros: number | null;
  amountDueMicros: number;
};

/**
 * The money fields of the account: prepaid credit is drawn down by the period's cost; under a
 * hard policy the budget (default: the initial credit) is also reported as remaining headroom.
 */
export function accountMoney(input: {
  initialCreditMicros: number;
  periodTotalMicros: number;
  budgetPolicy: TBudgetPolicy;
  monthlyBudgetMicros: number | null;
}): TAccountMoney {
  const prepaidCreditMicros = Math.max(0, input.initialCreditMicros - input.periodTotalMicros);
  const amountDueMicros = Math.max(0, input.periodTotalMicros - input.initialCreditMicros);
  if (input.budgetPolicy === "soft")
    return { prepaidCreditMicros, budgetRemainingMicros: null, monthlyBudgetMicros: null, amountDueMicros };
  const budget = input.monthlyBudgetMicros ?? input.initialCreditMicros;
  return {
    prepaidCreditMicros,
    budgetRemainingMicros: Math.max(0, budget - input.periodTotalMicros),
    monthlyBudgetMicros: budget,
    amountDueMicros,
  };
}
