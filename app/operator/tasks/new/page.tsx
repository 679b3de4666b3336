import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { getPageDeps } from "@/app/_server/page-data";
import { readNewTaskPage } from "@/lib/pages/operator/new-task-page";
import { NewTaskForm } from "./new-task-form";

export default async function NewTaskPage() {
  const actor = await requirePagePermission("task.create", "/operator/tasks/new");
  const { repositories, limits, maxima, agents } = await readNewTaskPage(await getPageDeps(), { actor });
  return (
    <section className="max-w-2xl space-y-4">
      <h1>New task</h1>
      <p className="text-sm text-slate-600">
        One issue in one target repository. The control plane resolves the base ref to a full SHA in its own mirror. To
        hand one issue to several agents at once, create <Link href="/operator/tasks/new-attempts">attempts</Link>{" "}
        instead.
      </p>
      <NewTaskForm
        repositories={repositories
          .filter((r) => !r.isDisabled && !r.probeRunId)
          .map((r) => ({ name: r.name, defaultBranch: r.defaultBranch }))}
        limits={{
          wallClockSeconds: limits.wallClockSeconds,
          cpus: limits.cpus,
          memoryMb: limits.memoryMb,
          diskGb: limits.diskGb,
        }}
        maxima={maxima}
        agents={agents.map((a) => ({ name: a.name, version: a.version, owner: a.owner, isBuiltIn: a.isBuiltIn }))}
      />
    </section>
  );
}
