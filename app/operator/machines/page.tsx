import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { EmptyState } from "@/components/empty-state";
import { StateBadge } from "@/components/state-badge";
import { getPageDeps } from "@/app/_server/page-data";
import { readMachinesPage } from "@/lib/pages/operator/machines-page";
import { DataTable } from "@/components/data-table";

function micros(value: string | null) {
  return value === null ? "—" : `$${(Number(value) / 1_000_000).toFixed(4)}`;
}

export default async function MachinesPage() {
  const actor = await requirePagePermission("operator.view", "/operator/machines");
  const { machines, quarantinedCount } = await readMachinesPage(await getPageDeps(), { actor });
  return (
    <section className="space-y-6">
      <h1>Guest machines</h1>
      {quarantinedCount > 0 && (
        <p className="rounded border border-red-200 bg-red-50 p-3 text-sm" data-testid="quarantine-banner">
          {quarantinedCount} quarantined machine(s):{" "}
          <Link href="/operator/quarantine">review, retry the destroy and release them</Link>.
        </p>
      )}
      {machines.length === 0 ? (
        <EmptyState title="No machines yet" />
      ) : (
        <DataTable
          testId="machine-table"
          headers={["Provider id", "Purpose", "State", "Age", "TTL", "Spend (reserved)", "Task"]}
        >
          {machines.map((m) => (
            <tr key={m.id} className="border-t border-slate-200">
              <td className="p-2 font-mono">{m.providerId ?? m.providerName}</td>
              <td className="p-2">{m.purpose}</td>
              <td className="p-2">
                <StateBadge state={m.state} />
              </td>
              <td className="p-2">{m.ageSeconds} s</td>
              <td className="p-2">{m.ttlSeconds} s</td>
              <td className="p-2">
                {micros(m.costMicros)} ({micros(m.reservedMicros)})
              </td>
              <td className="p-2">{m.taskId && <Link href={`/operator/tasks/${m.taskId}`}>task</Link>}</td>
            </tr>
          ))}
        </DataTable>
      )}
    </section>
  );
}
