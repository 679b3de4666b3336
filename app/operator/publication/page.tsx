import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { getPageDeps } from "@/app/_server/page-data";
import { readPublicationSettingsPage } from "@/lib/pages/operator/publication-settings-page";
import { SettingPanels } from "../_settings/setting-panel";

export default async function PublicationSettingsPage() {
  const actor = await requirePagePermission("publish.manage", "/operator/publication");
  const { settingPanels } = await readPublicationSettingsPage(await getPageDeps(), { actor });
  return (
    <section className="space-y-6">
      <h1>Publication</h1>
      <p className="text-sm text-slate-600">
        Where approved candidates are published as pull requests. The token stays in its file; only the path is stored.
        The queue of publications is on <Link href="/operator/publications">Publications</Link>; protected paths per
        repository are on <Link href="/operator/repositories">Repositories</Link>.
      </p>
      <SettingPanels panels={settingPanels} />
    </section>
  );
}
