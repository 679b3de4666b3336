import { requirePagePermission } from "@/app/_server/guard";
import { getPageDeps } from "@/app/_server/page-data";
import { readNewAttemptsPage } from "@/lib/pages/operator/new-attempts-page";
import { NewAttemptsForm } from "./new-attempts-form";

export default async function NewAttemptsPage() {
  const actor = await requirePagePermission("task.create", "/operator/tasks/new-attempts");
  const { repositories, profiles } = await readNewAttemptsPage(await getPageDeps(), { actor });
  return (
    <section className="max-w-2xl space-y-4">
      <h1>New attempts</h1>
      <p className="text-sm text-slate-600">
        One issue handed to several agent profiles at once: each attempt is a task of its own (its own guests, relay and
        trusted checks, under the same machine cap). The teacher compares them and approves one; the others end as not
        chosen.
      </p>
      <NewAttemptsForm
        repositories={repositories
          .filter((r) => !r.isDisabled && !r.probeRunId)
          .map((r) => ({ name: r.name, defaultBranch: r.defaultBranch }))}
        profiles={profiles}
      />
    </section>
  );
}
