/**
 * P0 account preflight: the provider account answers, its spend surface is observable (seed 001
 * finding D: budgetRemainingMicros, else prepaidCreditMicros; neither = fail closed), and the
 * headroom covers the operator's ceiling (the monthly global one, else one task's worst case). Records the observed spend fields only.
 */
import { readSetting } from "../settings/operator-settings";
import { computeAccountHeadroom } from "../spend/account-headroom";
import { defineProbe, outcome } from "./probe-types";

export const accountPreflightProbe = defineProbe({
  id: "P0",
  title: "Account preflight",
  timeCapMs: 30_000,
  run: async (deps) => {
    const account = await deps.substrate.account();
    const headroom = computeAccountHeadroom(account);
    const ceilings = await readSetting(deps, { key: "spend.ceilings" });
    const observed = {
      status: String(account.status ?? "").slice(0, 200),
      budgetRemainingMicros: account.budgetRemainingMicros ?? null,
      monthlyBudgetMicros: account.monthlyBudgetMicros ?? null,
      prepaidCreditMicros: account.prepaidCreditMicros ?? null,
      lowBalanceThresholdMicros: account.lowBalanceThresholdMicros ?? null,
      periodCostTotalMicros: account.periodCost?.totalMicros ?? null,
    };
    if (headroom.kind === "unobservable") return outcome(false, { observed, reason: headroom.reason });
    // The operator's ceiling that bounds what we may spend next: the monthly global one when set,
    // else one task's worst case. The provider must have at least that much left.
    const ceilingMicros = ceilings.monthlyGlobalMicros ?? ceilings.perTaskMicros;
    const isAbove = headroom.headroomMicros >= ceilingMicros;
    return outcome(isAbove, {
      observed,
      headroomMicros: headroom.headroomMicros,
      headroomSource: headroom.source,
      isLowBalance: headroom.isLowBalance,
      ceilingMicros,
      ceilingSource: ceilings.monthlyGlobalMicros === null ? "perTaskMicros" : "monthlyGlobalMicros",
      ...(isAbove
        ? {}
        : { reason: `headroom ${headroom.headroomMicros} µ$ is below the operator's ceiling ${ceilingMicros} µ$` }),
    });
  },
});
