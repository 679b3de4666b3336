import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { DataTable } from "@/components/data-table";
import { DiffTable } from "@/components/diff-table";
import { EmptyState } from "@/components/empty-state";
import { DateRangeFields, FilterBar } from "@/components/filter-bar";
import { Pager, queryString } from "@/components/pager";
import { diffValues } from "@/lib/audit-log/diff-values";
import { getPageDeps } from "@/app/_server/page-data";
import { AUDIT_KINDS, type TAuditEntry } from "@/lib/audit-log/list-audit-entries";
import { readAuditPage } from "@/lib/pages/operator/audit-page";
import { formatDateTime } from "@/lib/format/format";
import { isSettingKey, SETTING_DEFINITIONS } from "@/lib/settings/setting-registry";

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

const CONTROL = "mt-1 block rounded border border-slate-300 px-2 py-1 text-sm";

function targetLink(entry: TAuditEntry) {
  if (entry.targetType === "task" && entry.targetId)
    return <Link href={`/operator/tasks/${entry.targetId}`}>task {entry.targetId.slice(0, 8)}</Link>;
  if (entry.targetType === "setting" && entry.targetId) return <span className="font-mono">{entry.targetId}</span>;
  return (
    <span>
      {entry.targetType}
      {entry.targetId ? <span className="font-mono"> {entry.targetId.slice(0, 36)}</span> : null}
    </span>
  );
}

/** The detail of one entry: a setting change as its diff, anything else as its fields (escaped text). */
function Detail({ entry }: { entry: TAuditEntry }) {
  const detail = (entry.detail ?? {}) as Record<string, unknown>;
  if (entry.action === "setting.write") {
    // A first write replaces the registry's default: show what changed against it, not the whole value.
    const fromDefaults =
      (detail.before ?? null) === null && entry.targetId !== null && isSettingKey(entry.targetId)
        ? SETTING_DEFINITIONS[entry.targetId].default
        : null;
    const rows = diffValues(detail.before ?? fromDefaults, detail.after ?? null);
    return (
      <div className="space-y-1">
        {typeof detail.reason === "string" && <p className="text-xs">Reason: “{detail.reason}”</p>}
        {typeof detail.version === "number" && (
          <p className="text-xs text-slate-600">
            version {detail.version}
            {fromDefaults !== null && " (first change from the defaults)"}
          </p>
        )}
        {rows.length === 0 ? (
          <p className="text-xs text-slate-600">no change in value</p>
        ) : (
          <DiffTable rows={rows} testId="audit-diff" />
        )}
      </div>
    );
  }
  const entries = Object.entries(detail).slice(0, 12);
  if (entries.length === 0) return null;
  return (
    <dl className="grid grid-cols-[auto_1fr] gap-x-2 text-xs">
      {entries.map(([key, value]) => (
        <div key={key} className="contents">
          <dt className="text-slate-600">{key}</dt>
          <dd className="break-all font-mono">
            {(typeof value === "string" ? value : JSON.stringify(value)).slice(0, 400)}
          </dd>
        </div>
      ))}
    </dl>
  );
}

export default async function AuditPage({ searchParams }: Props) {
  const actor = await requirePagePermission("audit.view", "/operator/audit");
  const raw = Object.fromEntries(
    Object.entries(await searchParams).flatMap(([k, v]) => (typeof v === "string" && v !== "" ? [[k, v]] : [])),
  );
  const { result, users, query, isFilterValid } = await readAuditPage(await getPageDeps(), { actor, filter: raw });
  return (
    <section className="space-y-4">
      <h1>Audit trail</h1>
      <FilterBar
        testId="audit-filter"
        links={
          <Link href="/operator/audit" className="py-1.5">
            clear
          </Link>
        }
      >
        <label>
          Actor
          <select name="actor" defaultValue={query.actor ?? ""} className={CONTROL}>
            <option value="">anyone</option>
            <option value="system">the system (no user)</option>
            {users.map((u) => (
              <option key={u.id} value={u.id}>
                {u.email}
              </option>
            ))}
          </select>
        </label>
        <label>
          Kind
          <select name="kind" defaultValue={query.kind ?? ""} className={CONTROL}>
            <option value="">everything</option>
            {Object.entries(AUDIT_KINDS).map(([value, kind]) => (
              <option key={value} value={value}>
                {kind.label}
              </option>
            ))}
          </select>
        </label>
        <DateRangeFields from={query.from} to={query.to} controlClassName={CONTROL} />
      </FilterBar>
      {!isFilterValid && <p className="text-sm text-red-800">That filter is not valid; showing everything.</p>}
      {result.items.length === 0 ? (
        <EmptyState title="Nothing recorded for this filter" />
      ) : (
        <DataTable testId="audit-table" headers={["When", "Who", "Action", "Target", "Detail"]}>
          {result.items.map((entry) => (
            <tr
              key={entry.id}
              className="border-t border-slate-200 align-top"
              data-testid="audit-row"
              data-action={entry.action}
            >
              <td className="whitespace-nowrap p-2 font-mono text-xs">
                {formatDateTime(entry.createdAt, { precision: "second" })}
              </td>
              <td className="p-2">{entry.actorEmail ?? <span className="text-slate-500">system</span>}</td>
              <td className="p-2 font-mono text-xs">{entry.action}</td>
              <td className="p-2 text-xs">{targetLink(entry)}</td>
              <td className="min-w-64 p-2">
                <Detail entry={entry} />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
      <Pager
        page={result.page}
        pageSize={result.pageSize}
        total={result.total}
        hrefOf={(page) => `/operator/audit${queryString({ ...query, page })}`}
      />
    </section>
  );
}
