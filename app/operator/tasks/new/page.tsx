import Link from "next/link";
import { requirePagePermission } from "@/app/_server/guard";
import { getDb } from "@/lib/db/client";
import { listAgentProfiles } from "@/lib/agents/agent-profiles.repo";
import { listTargetRepositories } from "@/lib/repos/target-repositories";
import { readSetting } from "@/lib/settings/operator-settings";
import { NewTaskForm } from "./new-task-form";

export default async function NewTaskPage() {
  await requirePagePermission("task.create", "/operator/tasks/new");
  const db = await getDb();
  const [repositories, limits, maxima, agents] = await Promise.all([
    listTargetRepositories({ db }),
    readSetting(db, "task.limits"),
    readSetting(db, "task.overrideMaxima"),
    listAgentProfiles({ db }),
  ]);
  return (
    <section className="max-w-2xl space-y-4">
      <h1>New task</h1>
      <p className="text-sm text-slate-600">
        One issue in one target repository. The control plane resolves the base ref to a full SHA in its own mirror. To hand one issue to
        several agents at once, create <Link href="/operator/tasks/new-attempts">attempts</Link> instead.
      </p>
      <NewTaskForm
        repositories={repositories
          .filter((r) => !r.isDisabled && !r.probeRunId)
          .map((r) => ({ name: r.name, defaultBranch: r.defaultBranch }))}
        limits={{ wallClockSeconds: limits.wallClockSeconds, cpus: limits.cpus, memoryMb: limits.memoryMb, diskGb: limits.diskGb }}
        maxima={maxima}
        agents={agents.map((a) => ({ name: a.name, version: a.version, owner: a.owner, isBuiltIn: a.isBuiltIn }))}
      />
    </section>
  );
}
