import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { ActionForm } from "@/components/action-form";
import { EmptyState } from "@/components/empty-state";
import { Field } from "@/components/form-field";
import { Pager, queryString } from "@/components/pager";
import { getPageDeps } from "@/app/_server/page-data";
import { readQuarantinePage } from "@/lib/pages/operator/quarantine-page";
import { formatDateTime, formatSeconds } from "@/lib/format/format";
import { formatMicros } from "@/lib/spend/spend-guard";
import { retryDestroyAndReleaseAction } from "./actions";

type Props = { searchParams: Promise<{ page?: string }> };

export default async function QuarantinePage({ searchParams }: Props) {
  const actor = await requirePagePermission("machine.manage", "/operator/quarantine");
  const result = await readQuarantinePage(await getPageDeps(), { actor, page: (await searchParams).page });
  return (
    <section className="space-y-4">
      <h1>Quarantine ({result.total})</h1>
      <p className="text-sm text-slate-600">
        A machine whose destroy failed, or could not be proven, is quarantined: never reused, and its reservation stays
        counted. Releasing retries the destroy first; only a machine the provider has deleted (or no longer knows) is
        released.
      </p>
      {result.items.length === 0 ? (
        <EmptyState title="No quarantined machines">Nothing is waiting for cleanup.</EmptyState>
      ) : (
        <ul className="space-y-3" data-testid="quarantine-list">
          {result.items.map((m) => (
            <li
              key={m.id}
              className="space-y-2 rounded border border-red-200 bg-white p-3 text-sm"
              data-testid="quarantined-machine"
            >
              <dl className="grid grid-cols-1 gap-x-4 sm:grid-cols-[auto_1fr]">
                <dt className="text-slate-600">Provider id / name</dt>
                <dd className="font-mono">
                  {m.providerId ?? "—"} / {m.providerName}
                </dd>
                <dt className="text-slate-600">Substrate, image</dt>
                <dd>
                  {m.substrate}, <span className="font-mono">{m.imageRef}</span>
                </dd>
                <dt className="text-slate-600">Purpose, owner</dt>
                <dd>
                  {m.purpose}
                  {m.taskId ? (
                    <>
                      {" "}
                      of <Link href={`/operator/tasks/${m.taskId}`}>task {m.taskId.slice(0, 8)}</Link>
                    </>
                  ) : m.probeRunId ? (
                    ` of probe run ${m.probeRunId.slice(0, 8)}`
                  ) : null}{" "}
                  <span className="font-mono text-xs text-slate-500">operation {m.operationId}</span>
                </dd>
                <dt className="text-slate-600">Quarantined</dt>
                <dd>
                  {formatDateTime(m.quarantinedAt)} ({formatSeconds(m.quarantinedSeconds)} ago), reservation held{" "}
                  {formatMicros(m.reservedMicros)}
                </dd>
                <dt className="text-slate-600">Reason</dt>
                <dd className="break-words text-red-900">{m.reason}</dd>
              </dl>
              <ActionForm
                action={retryDestroyAndReleaseAction}
                submitLabel="Retry destroy and release"
                pendingLabel="Destroying…"
                tone="danger"
                className="flex flex-wrap items-start gap-2"
              >
                <input type="hidden" name="machineId" value={m.id} />
                <Field name="reason" label={<span className="sr-only">Reason</span>}>
                  <input
                    required
                    minLength={5}
                    maxLength={1000}
                    placeholder="Reason (kept in the audit trail)"
                    className="w-80 rounded border border-slate-300 px-2 py-1"
                  />
                </Field>
              </ActionForm>
            </li>
          ))}
        </ul>
      )}
      <Pager
        page={result.page}
        pageSize={100}
        total={result.total}
        hrefOf={(page) => `/operator/quarantine${queryString({ page })}`}
      />
    </section>
  );
}
