import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { ActionForm } from "@/components/action-form";
import { EmptyState } from "@/components/empty-state";
import { StateBadge } from "@/components/state-badge";
import { getDb } from "@/lib/db/client";
import { listMachines } from "@/lib/machines/list-machines";
import { releaseQuarantineAction } from "./actions";
import { DataTable } from "@/components/data-table";

function micros(value: string | null) {
  return value === null ? "—" : `$${(Number(value) / 1_000_000).toFixed(4)}`;
}

export default async function MachinesPage() {
  await requirePagePermission("operator.view", "/operator/machines");
  const machines = await listMachines(await getDb());
  const quarantined = machines.filter((m) => m.state === "cleanup_quarantined");
  return (
    <section className="space-y-6">
      <h1>Guest machines</h1>
      {quarantined.length > 0 && (
        <div className="space-y-3 rounded border border-red-200 bg-red-50 p-3" data-testid="quarantine-list">
          <h2>Quarantined ({quarantined.length})</h2>
          <p className="text-sm">A quarantined machine is never reused. Releasing retries the destroy first and needs a reason.</p>
          {quarantined.map((m) => (
            <div key={m.id} className="rounded border border-red-200 bg-white p-2 text-sm">
              <p>
                <span className="font-mono">{m.providerId ?? m.providerName}</span> ({m.purpose}) — {m.quarantineReason ?? m.lastError}
              </p>
              <ActionForm action={releaseQuarantineAction} submitLabel="Retry destroy and release" className="mt-2 flex flex-wrap items-center gap-2">
                <input type="hidden" name="machineId" value={m.id} />
                <input name="reason" required minLength={5} placeholder="Reason" className="rounded border border-slate-300 px-2 py-1" />
              </ActionForm>
            </div>
          ))}
        </div>
      )}
      {machines.length === 0 ? (
        <EmptyState title="No machines yet" />
      ) : (
        <DataTable testId="machine-table" headers={["Provider id", "Purpose", "State", "Age", "TTL", "Spend (reserved)", "Task"]}>
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
