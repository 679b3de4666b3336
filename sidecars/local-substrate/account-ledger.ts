/**
 * The tenant account of the local substrate: the period's metered cost (deleted machines closed
 * into it, live machines metered up to now), the prepaid credit and budget policy the admin API
 * may change for spend-ceiling tests, and the vendor-shaped `GET /v1/account` view. The machines
 * themselves are the registry's; the ledger is handed the live ones whenever it needs them.
 */
import {
  accountMoney,
  addMeters,
  meterMachine,
  ZERO_METER,
  type TAccountMoney,
  type TBillingRates,
  type TBudgetPolicy,
  type TMachineMeter,
} from "./billing";
import { isoOf } from "./clock";
import type { TMachine, TSubstrateLimits } from "./machine-record";
import type { TLocalAccount } from "./wire-responses";

/** `GET /v1/account` status: says plainly that this is not a VM (never "active"). */
export const LOCAL_SUBSTRATE_ACCOUNT_STATUS = "local-substrate-not-a-vm";

export type TBillingSettings = TBillingRates & {
  prepaidCreditMicros: number;
  lowBalanceThresholdMicros: number;
  budgetPolicy: TBudgetPolicy;
  /** Hard policy only; default = the initial prepaid credit. */
  monthlyBudgetMicros: number | null;
  freeCreditMicros: number;
};

export type TAccountUpdate = {
  prepaidCreditMicros?: number | undefined;
  budgetPolicy?: TBudgetPolicy | undefined;
  monthlyBudgetMicros?: number | null | undefined;
  lowBalanceThresholdMicros?: number | undefined;
};

type TMeteredMachine = Pick<TMachine, "resources" | "createdAtMs">;

export type TAccountLedgerOptions = {
  billing: TBillingSettings;
  limits: TSubstrateLimits;
  tenantId: string;
  startedAtMs: number;
};

export class AccountLedger {
  readonly #billing: TBillingSettings;
  #periodMeter: TMachineMeter = ZERO_METER;
  #machinesCreated = 0;
  #initialCreditMicros: number;

  constructor(private readonly options: TAccountLedgerOptions) {
    this.#billing = { ...options.billing };
    this.#initialCreditMicros = options.billing.prepaidCreditMicros;
  }

  recordCreated(): void {
    this.#machinesCreated += 1;
  }

  /** Closes a deleted machine's meter into the period and returns it (for its usage report). */
  recordDeleted(machine: TMeteredMachine, now: number): TMachineMeter {
    const meter = meterMachine(machine.resources, machine.createdAtMs, now, this.#billing);
    this.#periodMeter = addMeters(this.#periodMeter, meter);
    return meter;
  }

  /** Under a hard budget policy, an exhausted budget refuses every new machine. */
  isBudgetExhausted(live: Iterable<TMeteredMachine>, now: number): boolean {
    const { budgetRemainingMicros } = this.#money(live, now);
    return budgetRemainingMicros !== null && budgetRemainingMicros <= 0;
  }

  /** Admin: sets the remaining prepaid credit and/or the budget policy, for spend-ceiling tests. */
  update(update: TAccountUpdate, live: Iterable<TMeteredMachine>, now: number): void {
    if (update.prepaidCreditMicros !== undefined)
      this.#initialCreditMicros = update.prepaidCreditMicros + this.#liveMeter(live, now).totalMicros;
    if (update.budgetPolicy !== undefined) this.#billing.budgetPolicy = update.budgetPolicy;
    if (update.monthlyBudgetMicros !== undefined) this.#billing.monthlyBudgetMicros = update.monthlyBudgetMicros;
    if (update.lowBalanceThresholdMicros !== undefined)
      this.#billing.lowBalanceThresholdMicros = update.lowBalanceThresholdMicros;
  }

  view(live: Iterable<TMeteredMachine>, now: number): TLocalAccount {
    const billing = this.#billing;
    const { limits, tenantId, startedAtMs } = this.options;
    const machines = [...live];
    const meter = this.#liveMeter(machines, now);
    const money = this.#money(machines, now);
    return {
      tenantId,
      status: LOCAL_SUBSTRATE_ACCOUNT_STATUS,
      effectiveMaxCpus: limits.maxCpus * limits.maxMachines,
      effectiveMaxMemoryMb: limits.maxMemoryMb * limits.maxMachines,
      effectiveMaxMachines: limits.maxMachines,
      budgetRemainingMicros: money.budgetRemainingMicros,
      monthlyBudgetMicros: money.monthlyBudgetMicros,
      prepaidCreditMicros: money.prepaidCreditMicros,
      lowBalanceThresholdMicros: billing.lowBalanceThresholdMicros,
      periodCost: {
        cpuMicros: meter.cpuMicros,
        memoryMicros: meter.memoryMicros,
        execMicros: 0,
        diskMicros: 0,
        egressMicros: 0,
        baseMicros: 0,
        volumeDiscountMicros: 0,
        freeCreditMicros: billing.freeCreditMicros,
        creditAppliedMicros: Math.min(meter.totalMicros, this.#initialCreditMicros),
        totalMicros: meter.totalMicros,
        amountDueMicros: money.amountDueMicros,
      },
      periodUsage: {
        tenantId,
        from: isoOf(startedAtMs),
        to: isoOf(now),
        totalUptimeSeconds: meter.totalUptimeSeconds,
        cpuHours: meter.cpuHours,
        memoryGbHours: meter.memoryGbHours,
        diskGbHours: 0,
        egressGb: 0,
        machineCount: this.#machinesCreated,
      },
      plan: {
        id: "local-substrate",
        name: "Local substrate (bubblewrap, not a VM)",
        isDefault: true,
        createdAt: isoOf(startedAtMs),
        maxGroups: 0,
        maxCpus: limits.maxCpus,
        maxMemoryMb: limits.maxMemoryMb,
        maxMachines: limits.maxMachines,
        maxConcurrentMachines: limits.maxMachines,
        rateCpuHourMicros: billing.rateCpuHourMicros,
        rateMemoryGbHourMicros: billing.rateMemoryGbHourMicros,
        rateExecMicros: 0,
        rateBaseHourMicros: 0,
        rateDiskGbHourMicros: 0,
        rateEgressGbMicros: 0,
        freeCreditMicros: billing.freeCreditMicros,
        budgetPolicy: billing.budgetPolicy,
        monthlyBudgetMicros: money.monthlyBudgetMicros,
      },
    };
  }

  /** The period so far: deleted machines' closed meters plus every live machine up to `now`. */
  #liveMeter(live: Iterable<TMeteredMachine>, now: number): TMachineMeter {
    let meter = this.#periodMeter;
    for (const machine of live)
      meter = addMeters(meter, meterMachine(machine.resources, machine.createdAtMs, now, this.#billing));
    return meter;
  }

  #money(live: Iterable<TMeteredMachine>, now: number): TAccountMoney {
    const billing = this.#billing;
    return accountMoney({
      initialCreditMicros: this.#initialCreditMicros,
      periodTotalMicros: this.#liveMeter(live, now).totalMicros,
      budgetPolicy: billing.budgetPolicy,
      monthlyBudgetMicros: billing.monthlyBudgetMicros,
    });
  }
}
