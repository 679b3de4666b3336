/**
 * The operator's audit trail (`/operator/audit`): one page of entries under the URL's filter (a
 * filter that does not parse shows everything and says so), and the users to filter by.
 */
import { listAuditEntries, ZListAuditEntriesSchema } from "../../audit-log/list-audit-entries";
import { listUsers } from "../../auth/users";
import { assertMayRead, type TPageDeps } from "../page-deps";
import type { Actor } from "../../contract/actor";

export async function readAuditPage(deps: TPageDeps, input: { actor: Actor; filter: Record<string, string> }) {
  assertMayRead(input.actor, "audit.view");
  const { db } = deps;
  const filter = ZListAuditEntriesSchema.safeParse(input.filter);
  const [result, users] = await Promise.all([
    listAuditEntries({ db }, filter.success ? filter.data : {}),
    listUsers({ db }),
  ]);
  const query = filter.success
    ? { actor: filter.data.actor, kind: filter.data.kind, from: filter.data.from, to: filter.data.to }
    : {};
  return { result, users, query, isFilterValid: filter.success };
}
