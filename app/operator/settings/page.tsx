import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { getDb } from "@/lib/db/client";
import { setDispatchAction } from "../probes/actions";
import { DispatchGatePanel } from "@/components/dispatch-gate-panel";
import { can } from "@/lib/auth/permissions";
import { getEnv } from "@/lib/env";
import { readDispatchGate } from "@/lib/probes/read-dispatch-gate";

const SETTING_PAGES = [
  [
    "/operator/limits",
    "Limits, guest and verifier images, the student agent command, per-task maxima, automatic retries, review rounds, separation of duties, concurrent machines",
  ],
  ["/operator/probes", "Qualification probes, the dispatch gate, P2's external egress targets"],
  ["/operator/spend", "Spend ceilings (monthly and lifetime), fallback rates, machine and model spend, the ledger"],
  ["/operator/relay", "Model relay upstream and its price per million tokens (and a test call)"],
  ["/operator/publication", "Publication provider"],
  ["/operator/repositories", "Target repositories and their protected publication paths"],
  ["/operator/users", "Users"],
  ["/operator/audit", "Audit trail"],
] as const;

export default async function SettingsPage() {
  const actor = await requirePagePermission("limits.edit", "/operator/settings");
  const db = await getDb();
  const dispatch = await readDispatchGate(db, getEnv());
  return (
    <section className="space-y-6">
      <h1>Settings</h1>
      {/* The gate opens only with probe evidence; its controls and the runs live on the Probes page. */}
      <DispatchGatePanel gate={dispatch} action={setDispatchAction} canToggle={can(actor, "dispatch.toggle")} />
      <p className="text-sm">
        <Link href="/operator/probes">Qualification probes and the dispatch gate</Link>
      </p>
      <div className="space-y-2 rounded border border-slate-200 bg-white p-4" data-testid="settings-links">
        <h2>Everything else</h2>
        <p className="text-sm text-slate-600">
          Each setting has a typed form with per-field errors, a preview of the change and a required reason; every save is versioned and
          audited.
        </p>
        <ul className="list-disc pl-5 text-sm">
          {SETTING_PAGES.map(([href, label]) => (
            <li key={href}>
              <Link href={href}>{label}</Link>
            </li>
          ))}
        </ul>
      </div>
    </section>
  );
}
