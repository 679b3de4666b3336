import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { getPageDeps } from "@/app/_server/page-data";
import { setDispatchAction } from "../probes/actions";
import { DispatchGatePanel } from "@/components/dispatch-gate-panel";
import { readSettingsPage } from "@/lib/pages/operator/settings-page";
import { settingPagesIndex } from "@/lib/settings/setting-registry";

export default async function SettingsPage() {
  const actor = await requirePagePermission("limits.edit", "/operator/settings");
  const { dispatch, canToggle } = await readSettingsPage(await getPageDeps(), { actor });
  return (
    <section className="space-y-6">
      <h1>Settings</h1>
      {/* The gate opens only with probe evidence; its controls and the runs live on the Probes page. */}
      <DispatchGatePanel gate={dispatch} action={setDispatchAction} canToggle={canToggle} />
      <p className="text-sm">
        <Link href="/operator/probes">Qualification probes and the dispatch gate</Link>
      </p>
      <div className="space-y-2 rounded border border-slate-200 bg-white p-4" data-testid="settings-links">
        <h2>Everything else</h2>
        <p className="text-sm text-slate-600">
          Each setting has a typed form with per-field errors, a preview of the change and a required reason; every save
          is versioned and audited.
        </p>
        <ul className="list-disc pl-5 text-sm">
          {/* Derived from the settings' definitions: a new setting is listed under its page by itself. */}
          {settingPagesIndex().map((page) => (
            <li key={page.href}>
              <Link href={page.href}>{page.title}</Link>
              {page.settings.length > 0 && <span className="text-slate-600"> — {page.settings.join("; ")}</span>}
            </li>
          ))}
          <li>
            <Link href="/operator/audit?kind=setting">Audit trail</Link>
            <span className="text-slate-600"> — every saved version of every setting, with its reason</span>
          </li>
        </ul>
      </div>
    </section>
  );
}
