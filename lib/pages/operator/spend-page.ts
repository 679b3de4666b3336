/**
 * The operator's spend page (`/operator/spend`): the month's overview and ceilings, one page of the
 * ledger under the URL's filter (a filter that does not parse shows the unfiltered first page), the
 * last preflight, and its setting panels.
 */
import type { Actor } from "../../contract/actor";
import { listSpendLedger, ZListSpendLedgerSchema } from "../../spend/list-spend-ledger";
import { readLastPreflight } from "../../spend/read-last-preflight";
import { readSpendOverview } from "../../spend/read-spend-overview";
import { assertMayRead, type TPageDeps } from "../page-deps";
import { readSettingPanels } from "../setting-panels";

export const SPEND_LEDGER_PAGE_SIZE = 25;

export async function readSpendPage(deps: TPageDeps, input: { actor: Actor; filter: Record<string, string> }) {
  assertMayRead(input.actor, "spend.edit");
  const { db } = deps;
  const filter = ZListSpendLedgerSchema.safeParse({ ...input.filter, pageSize: String(SPEND_LEDGER_PAGE_SIZE) });
  const [overview, ledger, preflight, settingPanels] = await Promise.all([
    readSpendOverview({ db }),
    listSpendLedger({ db }, filter.success ? filter.data : { pageSize: SPEND_LEDGER_PAGE_SIZE }),
    readLastPreflight({ db }),
    readSettingPanels(deps, { page: "/operator/spend" }),
  ]);
  const query = filter.success
    ? {
        kind: filter.data.kind,
        resource: filter.data.resource,
        taskId: filter.data.taskId,
        from: filter.data.from,
        to: filter.data.to,
      }
    : {};
  return { overview, ledger, preflight, query, isFilterValid: filter.success, settingPanels };
}
