/**
 * Drives one task from its recorded state as far as it can go now. Each step ends in exactly
 * one committed transition, so a worker killed anywhere resumes from the last committed state:
 * it never skips ahead, never repeats a side effect that already happened (creates reconcile by
 * machine name, the guest runner is idempotent, imports are keyed by task), and never reads a
 * failure as success.
 */
import type { Task } from "../db/generated/client";
import { isAppError } from "../errors";
import { isDispatchOpen } from "../probes/read-dispatch-gate";
import { admitQueuedTask } from "../lifecycle/admit-task";
import { collectTask } from "../lifecycle/collect-task";
import { failTask } from "../lifecycle/fail-task";
import { provisionTask } from "../lifecycle/provision-task";
import { queueNextRound } from "../lifecycle/queue-next-round";
import { publishStep } from "../publish/publish-step";
import { runVerification, startVerification } from "../verify/run-verification";
import { runGuest } from "../lifecycle/run-guest";
import type { TaskRunContext } from "../tasks/task-run-context";

/** Steps owned by other modules (verification, publication) register here. */
export type TaskStep = (ctx: TaskRunContext, task: Task) => Promise<void>;
export type TaskSteps = Partial<Record<Task["state"], TaskStep>>;

export const LIFECYCLE_STEPS: TaskSteps = {
  // Admission under the substrate's machine cap (lib/lifecycle/admit-task.ts); at capacity the
  // task stays queued and the step ends without a transition ("waiting"). The worker's jobs admit
  // in fair order instead (lib/jobs/pick-task-to-drive.ts); this path serves tasks driven directly.
  queued: async (ctx, task) => {
    await admitQueuedTask(
      { db: ctx.db, substrateLabel: ctx.substrate.label },
      { taskId: task.id, isProbeTask: task.probeRunId !== null },
    );
  },
  provisioning: provisionTask,
  running: runGuest,
  collecting: collectTask,
  imported: startVerification,
  verifying: runVerification,
  // A revision round (issue 14): "Request changes" closed the round; the next one starts queued.
  changes_requested: queueNextRound,
  approved: publishStep,
  pr_pending: publishStep,
};

export type AdvanceOutcome = "waiting" | "done" | "dispatch_disabled";

export async function advanceTask(
  ctx: TaskRunContext,
  taskId: string,
  steps: TaskSteps = LIFECYCLE_STEPS,
): Promise<AdvanceOutcome> {
  for (let guard = 0; guard < 20; guard++) {
    const task = await ctx.db.task.findUniqueOrThrow({ where: { id: taskId } });
    // The gate is re-proved before every provisioning (lib/probes/read-dispatch-gate.ts): a gate
    // closed while tasks are queued leaves them queued. A qualification probe's own task is the
    // probe run itself, started by an operator, and is not subject to the gate it qualifies.
    if (task.state === "queued" && task.probeRunId === null && !(await isDispatchOpen(ctx.db, ctx.env)))
      return "dispatch_disabled";
    const step = steps[task.state];
    if (!step) return "done";
    try {
      await step(ctx, task);
      // A step that ended without moving the task (publication waiting for its backoff) is not
      // retried in a loop here: the sweep brings the task back when it is due.
      const after = await ctx.db.task.findUniqueOrThrow({ where: { id: taskId }, select: { state: true } });
      if (after.state === task.state) return "waiting";
    } catch (error) {
      // Someone else moved the task (a cancel, another worker): re-read and carry on from there.
      if (isAppError(error) && error.code === "STATE_CONFLICT") {
        const now = await ctx.db.task.findUniqueOrThrow({ where: { id: taskId }, select: { state: true } });
        if (now.state !== task.state) continue;
      }
      await failTask(ctx, { taskId, error });
      return "done";
    }
  }
  return "waiting";
}
