import Link from "next/link";
import { getDb } from "@/lib/db/client";
import { readSetting, readSettingVersion } from "@/lib/settings/operator-settings";
import { SETTING_SCHEMAS } from "@/lib/settings/setting-schemas";
import { SettingForm } from "./setting-form";
import type { TFormSettingKey } from "./setting-form-model";

/**
 * One setting as an operator page shows it: its label and current version (with who changed it
 * last, linked to the audit trail), and its typed form. A stored value that no longer validates
 * is shown as such and the form starts from the default.
 */
export async function SettingPanel({ settingKey, description }: { settingKey: TFormSettingKey; description?: React.ReactNode }) {
  const db = await getDb();
  const definition = SETTING_SCHEMAS[settingKey];
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
          {definition.label} <span className="font-mono text-xs font-normal text-slate-500">{settingKey}</span>
        </h2>
        <p className="text-xs text-slate-600" data-testid="setting-version">
          {version === 0 ? (
            "version 0 (defaults, never saved)"
          ) : (
            <>
              <Link href={`/operator/limits/versions/${settingKey}/${version}`}>version {version}</Link>,{" "}
              {last!.createdAt.toISOString().slice(0, 16).replace("T", " ")} UTC by {actor?.email ?? "the system"} —{" "}
              <Link href="/operator/audit?kind=setting">history</Link>
            </>
          )}
        </p>
      </div>
      {description && <div className="text-sm text-slate-700">{description}</div>}
      {!current.ok && (
        <p className="rounded bg-red-50 p-2 text-sm text-red-800">
          The stored value is invalid ({current.error}); the form starts from the defaults.
        </p>
      )}
      <SettingForm settingKey={settingKey} current={current.ok ? current.value : null} defaults={definition.default} />
    </section>
  );
}
