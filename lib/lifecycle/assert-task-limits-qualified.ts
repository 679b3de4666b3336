/**
 * A task carries the limits it was created with (lib/tasks/create-task.ts). One queued while the
 * gate was closed — or before the operator changed task.limits and re-qualified — may carry limits
 * no probe run qualified: more memory, CPU, time, disk, processes or output, or the HTTP relay
 * channel where the qualified configuration had the network blocked. Such a task is refused here,
 * at provisioning, before any machine exists (TASK_LIMITS_NOT_QUALIFIED: the task blocks, naming
 * the fields; an operator re-qualifies a configuration that covers it, or creates the task anew).
 */
import type { TTaskLimits } from "../contract/limits";
import type { Db } from "../db/client";
import type { Task } from "../db/generated/client";
import type { TEnv } from "../env";
import { AppError } from "../errors";
import { findUnqualifiedLimits } from "../probes/dispatch-gate";
import { readDispatchGate } from "../probes/read-dispatch-gate";

export async function assertTaskLimitsQualified(
  deps: { db: Db; env: TEnv },
  input: { task: Pick<Task, "id" | "probeRunId">; limits: TTaskLimits },
): Promise<void> {
  // A qualification probe's own task runs under the configuration its run is qualifying.
  if (input.task.probeRunId !== null) return;
  const gate = await readDispatchGate(deps);
  // A closed gate admits nothing new (lib/jobs/advance-task.ts); a task admitted before it closed
  // is not held to a configuration that no longer stands.
  if (!gate.isOpen || !gate.config) return;
  const weaker = findUnqualifiedLimits(input.limits, {
    qualified: gate.config.limits,
    overrideMaxima: gate.config.limitOverrideMaxima,
  });
  if (weaker.length === 0) return;
  const named = weaker.map((w) => `${w.field} ${w.task} (qualified: ${w.qualified ?? "none readable"})`).join(", ");
  throw new AppError(
    "TASK_LIMITS_NOT_QUALIFIED",
    `The task's limits are weaker than the configuration probe run ${gate.openedByRunId} qualified: ${named}. Re-qualify a configuration that covers them, or create the task again.`,
    { fields: weaker.map((w) => w.field), configDigest: gate.configDigest },
  );
}
