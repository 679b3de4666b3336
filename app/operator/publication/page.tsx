import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { SettingPanels } from "../_settings/setting-panel";

export default async function PublicationSettingsPage() {
  await requirePagePermission("publish.manage", "/operator/publication");
  return (
    <section className="space-y-6">
      <h1>Publication</h1>
      <p className="text-sm text-slate-600">
        Where approved candidates are published as pull requests. The token stays in its file; only the path is stored. The queue of
        publications is on <Link href="/operator/publications">Publications</Link>; protected paths per repository are on{" "}
        <Link href="/operator/repositories">Repositories</Link>.
      </p>
      <SettingPanels page="/operator/publication" />
    </section>
  );
}
