import Link from "next/link";
import { ActionForm } from "@/components/action-form";
import type { TDispatchGateView } from "@/lib/probes/read-dispatch-gate";
import type { TFormAction } from "@/components/action-form";

/** The one label for dispatch, used on every page that shows it: development mode says it is not a VM. */
export function DispatchLabel({ gate }: { gate: TDispatchGateView }) {
  if (!gate.isOpen) return <span data-testid="dispatch-state">off (tasks stay queued)</span>;
  return (
    <span data-testid="dispatch-state">
      on — {gate.mode}
      {gate.mode === "development" && (
        <strong className="ml-1 text-amber-800">(local substrate, not a VM: development only)</strong>
      )}
    </span>
  );
}

/** The gate with its evidence: mode, the run that opened it, why it last closed, and the controls. */
export function DispatchGatePanel({
  gate,
  action,
  canToggle,
}: {
  gate: TDispatchGateView;
  action: TFormAction;
  canToggle: boolean;
}) {
  return (
    <div
      className="space-y-2 rounded border border-slate-200 bg-white p-4"
      data-testid="dispatch-panel"
      data-mode={gate.mode}
    >
      <h2>Dispatch gate</h2>
      <p className="text-sm">
        Dispatch is <DispatchLabel gate={gate} />.
      </p>
      <p className="text-xs text-slate-600">
        Current substrate configuration digest <code data-testid="current-digest">{gate.currentDigest}</code> (
        {gate.substrate === "local" ? "local substrate — not a VM" : "hosted substrate"}).
      </p>
      {gate.isOpen && gate.openedByRunId && (
        <p className="text-sm">
          Opened by probe run{" "}
          <Link href={`/operator/probes?run=${gate.openedByRunId}`} data-testid="opening-run">
            {gate.openedByRunId}
          </Link>
          .
        </p>
      )}
      {!gate.isOpen && gate.closedReason && (
        <p className="text-sm text-red-800" data-testid="dispatch-closed-reason">
          Last closed: {gate.closedReason}
        </p>
      )}
      {canToggle && (
        <div className="flex flex-wrap gap-2">
          {gate.isOpen ? (
            <ActionForm action={action} submitLabel="Turn dispatch off" tone="danger" testId="dispatch-off-form">
              <input type="hidden" name="mode" value="off" />
            </ActionForm>
          ) : (
            <>
              <ActionForm
                action={action}
                submitLabel="Turn dispatch on (development)"
                testId="dispatch-development-form"
              >
                <input type="hidden" name="mode" value="development" />
              </ActionForm>
              <ActionForm action={action} submitLabel="Turn dispatch on (production)" testId="dispatch-production-form">
                <input type="hidden" name="mode" value="production" />
              </ActionForm>
            </>
          )}
        </div>
      )}
    </div>
  );
}
