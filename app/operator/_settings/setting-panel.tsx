import Link from "next/link";
import type { TSettingPanelView } from "@/lib/pages/setting-panels";
import { formatDateTime } from "@/lib/format/format";
import { SettingForm } from "./setting-form";

/**
 * One setting as an operator page shows it: its label and current version (with who changed it
 * last, linked to the audit trail), its description and its typed form — all from the setting's
 * definition. A stored value that no longer validates is shown as such and the form starts from
 * the default. The page's read…Page reads it (lib/pages/setting-panels.ts); this only renders.
 */
function SettingPanel({ view }: { view: TSettingPanelView }) {
  const { panel, current, version, last } = view;
  const settingKey = panel.key;
  return (
    <section
      className="space-y-3 rounded border border-slate-200 bg-white p-4"
      data-testid={`setting-panel-${settingKey}`}
    >
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h2>
          {panel.label} <span className="font-mono text-xs font-normal text-slate-500">{settingKey}</span>
        </h2>
        <p className="text-xs text-slate-600" data-testid="setting-version">
          {version === 0 ? (
            "version 0 (defaults, never saved)"
          ) : (
            <>
              <Link href={`/operator/limits/versions/${settingKey}/${version}`}>version {version}</Link>,{" "}
              {formatDateTime(last!.createdAt)} by {last!.actorEmail ?? "the system"} —{" "}
              <Link href="/operator/audit?kind=setting">history</Link>
            </>
          )}
        </p>
      </div>
      {panel.description && <p className="text-sm text-slate-700">{panel.description}</p>}
      {!current.ok && (
        <p className="rounded bg-red-50 p-2 text-sm text-red-800">
          The stored value is invalid ({current.error}); the form starts from the defaults.
        </p>
      )}
      <SettingForm
        settingKey={settingKey}
        form={panel.form}
        current={current.ok ? current.value : null}
        defaults={panel.default}
      />
    </section>
  );
}

/** Every setting defined on a page (lib/settings/definitions/), in the registry's order, as its view model read them. */
export function SettingPanels({ panels }: { panels: readonly TSettingPanelView[] }) {
  return (
    <>
      {panels.map((view) => (
        <SettingPanel key={view.panel.key} view={view} />
      ))}
    </>
  );
}
