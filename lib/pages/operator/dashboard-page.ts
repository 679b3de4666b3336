/**
 * The operator's dashboard (`/operator`): the processes' health, the newest tasks, the provider
 * account (asked of the substrate, bounded), the dispatch gate, task and machine counts with the
 * machine cap, and the month's spend.
 */
import type { Actor } from "../../contract/actor";
import { readDashboard } from "../../health/read-dashboard";
import { readHealth } from "../../health/read-health";
import { readDispatchGate } from "../../probes/read-dispatch-gate";
import { readProviderAccount } from "../../spend/read-provider-account";
import { readSpendOverview } from "../../spend/read-spend-overview";
import type { Substrate } from "../../substrate/substrate";
import { listRecentTasks } from "../../tasks/list-tasks";
import { assertMayRead, type TPageDeps } from "../page-deps";

export async function readDashboardPage(deps: TPageDeps & { substrate: Substrate }, input: { actor: Actor }) {
  assertMayRead(input.actor, "operator.view");
  const { db, env, substrate } = deps;
  const [health, tasks, account, dispatch, dashboard, spend] = await Promise.all([
    readHealth(),
    listRecentTasks({ db }, { take: 20 }),
    readProviderAccount(substrate),
    readDispatchGate({ db, env }),
    readDashboard({ db, substrateLabel: substrate.label }),
    readSpendOverview({ db }),
  ]);
  return { health, tasks, account, dispatch, dashboard, spend };
}
