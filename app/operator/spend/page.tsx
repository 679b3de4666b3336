import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { DataTable } from "@/components/data-table";
import { EmptyState } from "@/components/empty-state";
import { DateRangeFields, FilterBar } from "@/components/filter-bar";
import { Pager, queryString } from "@/components/pager";
import { BreakdownChart, DailySpendChart } from "@/components/spend-charts";
import { SpendGauge } from "@/components/spend-gauge";
import { getPageDeps } from "@/app/_server/page-data";
import { readSpendPage } from "@/lib/pages/operator/spend-page";
import { formatDateTime } from "@/lib/format/format";
import { formatMicros } from "@/lib/spend/spend-guard";
import { SettingPanels } from "../_settings/setting-panel";

type Props = { searchParams: Promise<Record<string, string | string[] | undefined>> };

const CONTROL = "mt-1 block rounded border border-slate-300 px-2 py-1 text-sm";

function Card({ title, children, testId }: { title: string; children: React.ReactNode; testId?: string }) {
  return (
    <div className="rounded border border-slate-200 bg-white p-3" data-testid={testId}>
      <p className="text-sm text-slate-600">{title}</p>
      <div className="mt-1 text-sm">{children}</div>
    </div>
  );
}

export default async function SpendPage({ searchParams }: Props) {
  const actor = await requirePagePermission("spend.edit", "/operator/spend");
  const raw = Object.fromEntries(
    Object.entries(await searchParams).flatMap(([k, v]) => (typeof v === "string" && v !== "" ? [[k, v]] : [])),
  );
  const { overview, ledger, preflight, query, isFilterValid, settingPanels } = await readSpendPage(
    await getPageDeps(),
    {
      actor,
      filter: raw,
    },
  );
  const csvQuery = new URLSearchParams(
    Object.entries(query).filter((e): e is [string, string] => Boolean(e[1])),
  ).toString();
  const { ceilings } = overview;
  return (
    <section className="space-y-6">
      <h1>Spend</h1>
      <div className="grid grid-cols-1 gap-3 sm:grid-cols-2 lg:grid-cols-4">
        <Card title={`This month (${overview.month}, UTC)`} testId="spend-month">
          <SpendGauge committedMicros={overview.monthCommittedMicros} ceilingMicros={ceilings.monthlyGlobalMicros} />
          <span className="block text-xs text-slate-600" data-testid="spend-month-split">
            machines {formatMicros(overview.monthMachineMicros)} · model {formatMicros(overview.monthModelMicros)}
          </span>
        </Card>
        <Card title="Lifetime" testId="spend-lifetime">
          {formatMicros(overview.lifetime.spentMicros)} spent + {formatMicros(overview.lifetime.reservedMicros)}{" "}
          reserved
          <span className="block text-xs text-slate-600" data-testid="spend-lifetime-split">
            machines {formatMicros(overview.lifetime.machineMicros)} · model{" "}
            {formatMicros(overview.lifetime.modelMicros)}
          </span>
          <span className="block text-xs text-slate-600">ceiling {formatMicros(ceilings.globalMicros)}</span>
        </Card>
        <Card title="Projected (queued and running)" testId="spend-projected">
          {formatMicros(overview.projected.runningMicros)} reserved by {overview.projected.runningMachines} live
          machine(s)
          <span className="block">
            + at least {formatMicros(overview.projected.queuedMicros)} for {overview.projected.queuedTasks} queued
            task(s)
          </span>
          <span className="block">
            + {formatMicros(overview.projected.modelReservedMicros)} of model budget reserved by{" "}
            {overview.projected.openCapabilities} relay capability(ies)
          </span>
          <span className="block text-xs text-slate-600">
            worst case: rate × resources × TTL, student guest only; a task&apos;s token budget at the higher model price
          </span>
        </Card>
        <Card title="Provider account (last preflight)" testId="spend-preflight">
          {preflight ? (
            <>
              <span className={preflight.status === "passed" ? "text-green-800" : "text-red-800"}>
                {preflight.status}
              </span>{" "}
              {formatDateTime(preflight.finishedAt)}
              <dl className="mt-1 grid grid-cols-[auto_1fr] gap-x-2 text-xs">
                {Object.entries(preflight.observed).map(([key, value]) => (
                  <div key={key} className="contents">
                    <dt className="text-slate-600">{key}</dt>
                    <dd className="font-mono">
                      {typeof value === "number" && key.endsWith("Micros") ? formatMicros(value) : String(value)}
                    </dd>
                  </div>
                ))}
              </dl>
              {preflight.reason && <p className="text-xs text-red-800">{preflight.reason}</p>}
            </>
          ) : (
            <span className="text-slate-600">
              No preflight yet: <Link href="/operator/probes">run the probes</Link>.
            </span>
          )}
        </Card>
      </div>

      <div className="space-y-2 rounded border border-slate-200 bg-white p-4">
        <h2>Spend per day, {overview.month}</h2>
        <p className="text-xs text-slate-600">
          Machines and the model (relay tokens) are stacked apart. A machine&apos;s or a relay capability&apos;s cost
          counts on the day (and in the month) its reservation was made: the same rule the monthly ceiling applies.
        </p>
        {overview.monthCommittedMicros === 0 && overview.days.every((d) => d.committedMicros === 0) ? (
          <p className="text-sm text-slate-600" data-testid="daily-spend-empty">
            Nothing reserved or spent this month yet.
          </p>
        ) : (
          <DailySpendChart days={overview.days} monthlyCeilingMicros={ceilings.monthlyGlobalMicros} />
        )}
      </div>
      <div className="grid grid-cols-1 gap-3 lg:grid-cols-2">
        <div className="space-y-2 rounded border border-slate-200 bg-white p-4">
          <h2>Per repository, this month</h2>
          {overview.perRepository.length === 0 ? (
            <p className="text-sm text-slate-600">Nothing spent this month.</p>
          ) : (
            <BreakdownChart
              testId="repository-spend-chart"
              label="Spend per repository this month"
              rows={overview.perRepository.map((r) => ({ name: r.repository, ...r }))}
            />
          )}
        </div>
        <div className="space-y-2 rounded border border-slate-200 bg-white p-4">
          <h2>Per task, this month (top 20)</h2>
          {overview.perTask.length === 0 ? (
            <p className="text-sm text-slate-600">Nothing spent this month.</p>
          ) : (
            <BreakdownChart
              testId="task-spend-chart"
              label="Spend per task this month"
              rows={overview.perTask.map((t) => ({ name: t.label, ...t }))}
            />
          )}
        </div>
      </div>

      <div className="space-y-3">
        <h2>Ledger</h2>
        <FilterBar
          testId="ledger-filter"
          links={
            <a
              href={`/operator/spend/ledger.csv${csvQuery ? `?${csvQuery}` : ""}`}
              className="py-1.5"
              data-testid="ledger-csv"
              download
            >
              Export CSV
            </a>
          }
        >
          <label>
            Kind
            <select name="kind" defaultValue={query.kind ?? ""} className={CONTROL}>
              <option value="">all</option>
              <option value="reservation">reservation</option>
              <option value="release">release</option>
              <option value="usage">usage</option>
            </select>
          </label>
          <label>
            Resource
            <select name="resource" defaultValue={query.resource ?? ""} className={CONTROL}>
              <option value="">all</option>
              <option value="machine">machine</option>
              <option value="model">model (relay tokens)</option>
            </select>
          </label>
          <label>
            Task id
            <input name="taskId" defaultValue={query.taskId ?? ""} className={`${CONTROL} w-80 font-mono`} />
          </label>
          <DateRangeFields from={query.from} to={query.to} controlClassName={CONTROL} />
        </FilterBar>
        {!isFilterValid && <p className="text-sm text-red-800">That filter is not valid; showing everything.</p>}
        {ledger.items.length === 0 ? (
          <EmptyState title="No ledger entries for this filter" />
        ) : (
          <DataTable
            testId="ledger-table"
            headers={["When", "Kind", "Resource", "Amount", "Task", "Machine or relay capability", "Note"]}
          >
            {ledger.items.map((e) => (
              <tr key={e.id} className="border-t border-slate-200">
                <td className="whitespace-nowrap p-2 font-mono text-xs">
                  {formatDateTime(e.createdAt, { precision: "second" })}
                </td>
                <td className="p-2">{e.kind}</td>
                <td className="p-2">{e.resource}</td>
                <td className="p-2 font-mono">{formatMicros(e.amountMicros)}</td>
                <td className="p-2">
                  {e.taskId ? (
                    <Link href={`/operator/tasks/${e.taskId}`}>
                      {e.repository} #{e.issueNumber}
                    </Link>
                  ) : (
                    "—"
                  )}
                </td>
                <td className="p-2 font-mono text-xs">
                  {e.machine ?? (e.relayCapabilityId ? `relay capability ${e.relayCapabilityId.slice(0, 8)}` : "—")}
                </td>
                <td className="p-2 text-xs text-slate-600">{e.note}</td>
              </tr>
            ))}
          </DataTable>
        )}
        <Pager
          page={ledger.page}
          pageSize={ledger.pageSize}
          total={ledger.total}
          hrefOf={(page) => `/operator/spend${queryString({ ...query, page })}`}
        />
      </div>

      <SettingPanels panels={settingPanels} />
    </section>
  );
}
