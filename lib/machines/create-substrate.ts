/**
 * The substrate the control plane provisions on: the SmolCloud adapter (hosted when SMOLCLOUD_URL
 * is set, else the local substrate on loopback — same wire contract, NOT a VM) wrapped in the
 * spend guard, so every create reserves its worst-case cost first.
 */
import type { Db } from "../db/client";
import type { TEnv } from "../env";
import { readSetting } from "../settings/operator-settings";
import { createSpendGuard } from "../spend/spend-guard";
import { withSpendGuard, type TClosableSubstrate } from "../spend/spend-guarded-substrate";
import { substrateEndpoint } from "../substrate/substrate-endpoint";
import { SmolCloudSubstrate } from "../substrate/smolcloud/smolcloud-substrate";

export function createSubstrate(deps: { db: Db; env: TEnv }): TClosableSubstrate {
  const { db, env } = deps;
  return withSpendGuard(new SmolCloudSubstrate(substrateEndpoint(env)), {
    spendGuard: createSpendGuard(db),
    fallbackRates: () => readSetting({ db }, { key: "spend.rates" }),
  });
}
