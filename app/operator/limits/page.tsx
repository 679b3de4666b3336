import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { SettingPanel } from "../_settings/setting-panel";

export default async function LimitsPage() {
  await requirePagePermission("limits.edit", "/operator/limits");
  return (
    <section className="space-y-6">
      <div className="space-y-1">
        <h1>Limits and guests</h1>
        <p className="text-sm text-slate-600">
          Every save is a new version with its reason; a task keeps the limits it was created with and links to their version. Spend
          ceilings are on the <Link href="/operator/spend">Spend</Link> page.
        </p>
      </div>
      <SettingPanel settingKey="task.limits" description="What every task's guest runs under. Blank = the default." />
      <SettingPanel
        settingKey="task.overrideMaxima"
        description="A task's creator may raise these limits for one task, up to these maxima."
      />
      <SettingPanel settingKey="guest.image" />
      <SettingPanel settingKey="verifier.image" />
      <SettingPanel settingKey="guest.agent" />
      <SettingPanel settingKey="task.retry" />
      <SettingPanel settingKey="review.rounds" />
      <SettingPanel settingKey="review.separationOfDuties" />
      <SettingPanel settingKey="review.anonymous" />
      <SettingPanel
        settingKey="machines.concurrency"
        description="Spreads the substrate between tasks: a queued task starts only while its substrate has a free slot, and an operator's build waits for one. Re-verifications and retries are never refused at the cap: they wait for a free machine, ahead of tasks not started yet."
      />
    </section>
  );
}
