import Link from "next/link";
import { notFound } from "next/navigation";
import { requirePagePermission } from "@/app/_server/guard";
import { DiffTable } from "@/components/diff-table";
import { diffValues } from "@/lib/audit-log/diff-values";
import { getDb } from "@/lib/db/client";
import { formatDateTime } from "@/lib/format/format";
import { readSettingVersionValue } from "@/lib/settings/operator-settings";
import { isSettingKey, SETTING_DEFINITIONS } from "@/lib/settings/setting-registry";

type Props = { params: Promise<{ key: string; version: string }> };

/** One stored version of a setting (a task page links to the limits version it ran under). */
export default async function SettingVersionPage({ params }: Props) {
  const { key, version: versionText } = await params;
  await requirePagePermission("operator.view", `/operator/limits/versions/${encodeURIComponent(key)}/${encodeURIComponent(versionText)}`);
  const version = Number(versionText);
  if (!isSettingKey(key) || !Number.isInteger(version) || version < 1 || version > 1_000_000) notFound();
  const db = await getDb();
  const [row, previous] = await Promise.all([
    readSettingVersionValue(db, { key, version }),
    version > 1 ? readSettingVersionValue(db, { key, version: version - 1 }) : null,
  ]);
  if (!row) notFound();
  const actor = row.actorId ? await db.user.findUnique({ where: { id: row.actorId }, select: { email: true } }) : null;
  return (
    <section className="max-w-3xl space-y-4">
      <h1>
        {SETTING_DEFINITIONS[key].label}, version {version}
      </h1>
      <p className="text-sm text-slate-700" data-testid="version-meta">
        Saved {formatDateTime(row.createdAt, { precision: "second" })} by {actor?.email ?? "the system"}
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
