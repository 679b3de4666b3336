import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { DiffTable } from "@/components/diff-table";
import { diffValues } from "@/lib/audit-log/diff-values";
import { getPageDeps, orNotFound } from "@/app/_server/page-data";
import { readSettingVersionPage } from "@/lib/pages/operator/setting-version-page";
import { SETTING_DEFINITIONS } from "@/lib/settings/setting-registry";
import { formatDateTime } from "@/lib/format/format";

type Props = { params: Promise<{ key: string; version: string }> };

/** One stored version of a setting (a task page links to the limits version it ran under). */
export default async function SettingVersionPage({ params }: Props) {
  const { key: keyText, version: versionText } = await params;
  const actor = await requirePagePermission(
    "operator.view",
    `/operator/limits/versions/${encodeURIComponent(keyText)}/${encodeURIComponent(versionText)}`,
  );
  const { key, version, row, previous, authorEmail } = await orNotFound(
    readSettingVersionPage(await getPageDeps(), { actor, key: keyText, version: versionText }),
  );
  return (
    <section className="max-w-3xl space-y-4">
      <h1>
        {SETTING_DEFINITIONS[key].label}, version {version}
      </h1>
      <p className="text-sm text-slate-700" data-testid="version-meta">
        Saved {formatDateTime(row.createdAt, { precision: "second" })} by {authorEmail ?? "the system"}
        {row.reason ? <> — “{row.reason}”</> : null}
      </p>
      <div className="space-y-1">
        <h2>{previous ? `Change from version ${version - 1}` : "Change from the defaults"}</h2>
        <DiffTable rows={diffValues(previous ? previous.value : SETTING_DEFINITIONS[key].default, row.value)} />
      </div>
      <div className="space-y-1">
        <h2>Value</h2>
        <pre className="overflow-auto rounded border border-slate-200 bg-white p-3 text-xs" data-testid="version-value">
          {JSON.stringify(row.value, null, 2)}
        </pre>
      </div>
      <p className="text-sm">
        {version > 1 && <Link href={`/operator/limits/versions/${key}/${version - 1}`}>← version {version - 1}</Link>}{" "}
        <Link href="/operator/limits">current limits</Link>
      </p>
    </section>
  );
}
