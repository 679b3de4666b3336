import { requirePagePermission } from "@/app/_server/guard";
import { getPageDeps } from "@/app/_server/page-data";
import { readRelayPage } from "@/lib/pages/operator/relay-page";
import { ActionForm } from "@/components/action-form";
import { SettingPanels } from "../_settings/setting-panel";
import { testUpstreamAction } from "./actions";

export default async function RelayPage() {
  const actor = await requirePagePermission("relay.manage", "/operator/relay");
  const { settingPanels } = await readRelayPage(await getPageDeps(), { actor });
  return (
    <section className="space-y-6">
      <h1>Model relay</h1>
      <p className="text-sm text-slate-600">
        Guests never hold a model credential: they ask the relay with a task-scoped capability, and the relay calls this
        upstream. The credential stays in its file on this host; only the file&apos;s path is stored.
      </p>
      <SettingPanels panels={settingPanels} />
      <div className="space-y-2 rounded border border-slate-200 bg-white p-4">
        <h2>Test call</h2>
        <p className="text-sm text-slate-600">
          Makes one real, tiny completion call through the saved upstream and shows its latency, or its error.
        </p>
        <ActionForm
          action={testUpstreamAction}
          submitLabel="Make a test call"
          pendingLabel="Calling…"
          testId="relay-test-form"
          resultTestId="relay-test-result"
        >
          {null}
        </ActionForm>
      </div>
    </section>
  );
}
