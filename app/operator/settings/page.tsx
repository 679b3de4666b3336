import { requirePagePermission } from "@/app/_server/guard";
import { ActionForm } from "@/components/action-form";
import { getDb } from "@/lib/db/client";
import { readSetting } from "@/lib/settings/operator-settings";
import { readSpendSummary } from "@/lib/spend/read-spend-summary";
import { formatMicros } from "@/lib/spend/spend-guard";
import { saveSettingAction, toggleDispatchAction } from "./actions";

const EDITABLE = ["task.limits", "guest.image", "verifier.image", "guest.agent", "spend.ceilings", "spend.rates"] as const;

export default async function SettingsPage() {
  await requirePagePermission("limits.edit", "/operator/settings");
  const db = await getDb();
  const [dispatch, spend, values] = await Promise.all([
    readSetting(db, "dispatch"),
    readSpendSummary(db),
    Promise.all(EDITABLE.map(async (key) => ({ key, value: await readSetting(db, key).catch((error: Error) => ({ invalid: error.message })) }))),
  ]);
  return (
    <section className="space-y-6">
      <h1>Settings</h1>
      <div className="space-y-2 rounded border border-slate-200 bg-white p-4" data-testid="dispatch-panel">
        <h2>Dispatch gate</h2>
        <p className="text-sm">
          Dispatch is <strong data-testid="dispatch-state">{dispatch.enabled ? "on" : "off"}</strong>. While it is off, new tasks stay queued and no guest is created.
        </p>
        <ActionForm action={toggleDispatchAction} submitLabel={dispatch.enabled ? "Turn dispatch off" : "Turn dispatch on"} tone={dispatch.enabled ? "danger" : "primary"} testId="dispatch-form">
          <input type="hidden" name="enabled" value={dispatch.enabled ? "false" : "true"} />
        </ActionForm>
      </div>
      <div className="space-y-2 rounded border border-slate-200 bg-white p-4" data-testid="spend-panel">
        <h2>Spend</h2>
        <p className="text-sm">
          Reserved {formatMicros(spend.reservedMicros)}, spent {formatMicros(spend.spentMicros)}, global ceiling {formatMicros(spend.ceilings.globalMicros)}, per task{" "}
          {formatMicros(spend.ceilings.perTaskMicros)}.
        </p>
        <ul className="text-xs text-slate-600">
          {spend.recent.map((e) => (
            <li key={e.id}>
              {e.createdAt.toISOString().slice(0, 19)} {e.kind} {formatMicros(e.amountMicros)} {e.note}
            </li>
          ))}
        </ul>
      </div>
      {values.map(({ key, value }) => (
        <div key={key} className="space-y-2 rounded border border-slate-200 bg-white p-4">
          <h2 className="font-mono">{key}</h2>
          <ActionForm action={saveSettingAction} submitLabel="Save" testId={`setting-${key}`}>
            <input type="hidden" name="key" value={key} />
            <textarea name="value" rows={Math.min(20, JSON.stringify(value, null, 2).split("\n").length + 1)} defaultValue={JSON.stringify(value, null, 2)} className="w-full rounded border border-slate-300 p-2 font-mono text-xs" />
          </ActionForm>
        </div>
      ))}
    </section>
  );
}
