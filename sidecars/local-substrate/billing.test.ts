import { describe, expect, it } from "vitest";
import { accountMoney, addMeters, meterMachine, ZERO_METER } from "./billing";

const RATES = { rateCpuHourMicros: 50_000, rateMemoryGbHourMicros: 10_000 };

describe("meterMachine", () => {
  it("bills an hour of 2 cpus and 1 GiB at the plan rates", () => {
    const meter = meterMachine({ cpus: 2, memoryMb: 1024 }, 0, 3_600_000, RATES);
    expect(meter).toEqual({
      totalUptimeSeconds: 3600,
      cpuHours: 2,
      memoryGbHours: 1,
      cpuMicros: 100_000,
      memoryMicros: 10_000,
      totalMicros: 110_000,
    });
  });

  it("rounds a started second up and never bills negative time", () => {
    expect(meterMachine({ cpus: 1, memoryMb: 512 }, 0, 1, RATES).totalUptimeSeconds).toBe(1);
    expect(meterMachine({ cpus: 1, memoryMb: 512 }, 10, 0, RATES).totalMicros).toBe(0);
  });

  it("adds meters field by field", () => {
    const one = meterMachine({ cpus: 1, memoryMb: 1024 }, 0, 3_600_000, RATES);
    expect(addMeters(addMeters(ZERO_METER, one), one).totalMicros).toBe(2 * one.totalMicros);
  });
});

describe("accountMoney", () => {
  it("reports no budget headroom under a soft policy (seed 001 finding D), only prepaid credit", () => {
    expect(
      accountMoney({
        initialCreditMicros: 1_000,
        periodTotalMicros: 300,
        budgetPolicy: "soft",
        monthlyBudgetMicros: 5_000,
      }),
    ).toEqual({
      prepaidCreditMicros: 700,
      budgetRemainingMicros: null,
      monthlyBudgetMicros: null,
      amountDueMicros: 0,
    });
  });

  it("reports remaining budget under a hard policy, defaulting the budget to the credit", () => {
    expect(
      accountMoney({
        initialCreditMicros: 1_000,
        periodTotalMicros: 300,
        budgetPolicy: "hard",
        monthlyBudgetMicros: null,
      }).budgetRemainingMicros,
    ).toBe(700);
    expect(
      accountMoney({
        initialCreditMicros: 1_000,
        periodTotalMicros: 300,
        budgetPolicy: "hard",
        monthlyBudgetMicros: 250,
      }).budgetRemainingMicros,
    ).toBe(0);
  });

  it("never reports negative credit; the overrun is amount due", () => {
    expect(
      accountMoney({
        initialCreditMicros: 100,
        periodTotalMicros: 350,
        budgetPolicy: "soft",
        monthlyBudgetMicros: null,
      }),
    ).toMatchObject({ prepaidCreditMicros: 0, amountDueMicros: 250 });
  });
});
