import Link from "next/link";
import { getDb } from "@/lib/db/client";
import { formatDateTime } from "@/lib/format/format";
import { readSetting, readSettingVersion } from "@/lib/settings/operator-settings";
import { settingPanelsOf, type TSettingPanel } from "@/lib/settings/setting-registry";
import type { TSettingPage } from "@/lib/settings/setting-pages";
import { SettingForm } from "./setting-form";

/**
 * One setting as an operator page shows it: its label and current version (with who changed it
 * last, linked to the audit trail), its description and its typed form — all from the setting's
 * definition. A stored value that no longer validates is shown as such and the form starts from
 * the default.
 */
async function SettingPanel({ panel }: { panel: TSettingPanel }) {
  const db = await getDb();
  const settingKey = panel.key as Parameters<typeof readSetting>[1];
  const [current, version, last] = await Promise.all([
    readSetting(db, settingKey).then(
      (value) => ({ ok: true as const, value }),
      (error: Error) => ({ ok: false as const, error: error.message }),
    ),
    readSettingVersion(db, settingKey),
    db.settingVersion.findFirst({
      where: { key: settingKey },
      orderBy: { version: "desc" },
      select: { createdAt: true, reason: true, actorId: true },
    }),
  ]);
  const actor = last?.actorId ? await db.user.findUnique({ where: { id: last.actorId }, select: { email: true } }) : null;
  return (
    <section className="space-y-3 rounded border border-slate-200 bg-white p-4" data-testid={`setting-panel-${settingKey}`}>
      <div className="flex flex-wrap items-baseline justify-between gap-2">
        <h2>
          {panel.label} <span className="font-mono text-xs font-normal text-slate-500">{settingKey}</span>
        </h2>
        <p className="text-xs text-slate-600" data-testid="setting-version">
          {version === 0 ? (
            "version 0 (defaults, never saved)"
          ) : (
            <>
              <Link href={`/operator/limits/versions/${settingKey}/${version}`}>version {version}</Link>, {formatDateTime(last!.createdAt)}{" "}
              by {actor?.email ?? "the system"} — <Link href="/operator/audit?kind=setting">history</Link>
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
      <SettingForm settingKey={settingKey} form={panel.form} current={current.ok ? current.value : null} defaults={panel.default} />
    </section>
  );
}

/** Every setting defined on this page (lib/settings/definitions/), in the registry's order. */
export function SettingPanels({ page }: { page: TSettingPage }) {
  return (
    <>
      {settingPanelsOf(page).map((panel) => (
        <SettingPanel key={panel.key} panel={panel} />
      ))}
    </>
  );
}
