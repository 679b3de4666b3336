/**
 * Which task a task job drives (issue 16, item 3). A job for a task past `queued` drives that
 * task. A job for a queued task is a dispatch token: under the substrate's machine cap it admits
 * the next queued task in fair order across repositories (lib/lifecycle/admit-task.ts) — maybe
 * another task than its own — and drives that one. Its own task, if not admitted, stays queued
 * and gets a job again from the sweep (or the next ready notification). Jobs are taken in queue
 * order, so admitting "the job's own task" would let one repository's 200 queued jobs run ahead
 * of another's single task; admitting the fair head cannot.
 */
import type { TaskRunContext } from "../tasks/task-run-context";
import { admitNextTask } from "../lifecycle/admit-task";
import { isDispatchOpen } from "../probes/read-dispatch-gate";

export async function pickTaskToDrive(ctx: TaskRunContext, input: { taskId: string }): Promise<string | null> {
  const task = await ctx.db.task.findUnique({ where: { id: input.taskId }, select: { state: true, probeRunId: true } });
  if (!task) return null;
  // A qualification probe's task is driven by its run (and admitted over the cap there).
  if (task.state !== "queued" || task.probeRunId !== null) return input.taskId;
  // The gate is re-proved before every admission (lib/probes/read-dispatch-gate.ts).
  if (!(await isDispatchOpen(ctx.db, ctx.env))) return null;
  const admission = await admitNextTask({ db: ctx.db, substrateLabel: ctx.substrate.label });
  return admission.kind === "admitted" ? admission.taskId : null;
}
