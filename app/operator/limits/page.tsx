import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { getPageDeps } from "@/app/_server/page-data";
import { readLimitsPage } from "@/lib/pages/operator/limits-page";
import { SettingPanels } from "../_settings/setting-panel";

export default async function LimitsPage() {
  const actor = await requirePagePermission("limits.edit", "/operator/limits");
  const { settingPanels } = await readLimitsPage(await getPageDeps(), { actor });
  return (
    <section className="space-y-6">
      <div className="space-y-1">
        <h1>Limits and guests</h1>
        <p className="text-sm text-slate-600">
          Every save is a new version with its reason; a task keeps the limits it was created with and links to their
          version. Spend ceilings are on the <Link href="/operator/spend">Spend</Link> page.
        </p>
      </div>
      <SettingPanels panels={settingPanels} />
    </section>
  );
}
