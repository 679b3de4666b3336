/**
 * The composition root for qualification runs: probe tasks advance through the same lifecycle
 * step table as every task (lib/probes never imports lib/jobs), and a queued probe run executes
 * as a pg-boss job in the worker — or in the CLI's own process with the same code.
 */
import type { TaskRunContext } from "../tasks/task-run-context";
import { executeProbeRun } from "../probes/execute-probe-run";
import type { TProbeDeps, TProbeTaskOptions } from "../probes/probe-types";
import { advanceTask, LIFECYCLE_STEPS, type TaskSteps } from "./advance-task";

/** Drives a probe task until it rests (review, failed, blocked …); the sweep never touches it. */
export function createProbeTaskDriver(ctx: TaskRunContext, steps: TaskSteps = LIFECYCLE_STEPS) {
  return async (taskId: string, options: TProbeTaskOptions = {}): Promise<void> => {
    const local: TaskRunContext = { ...ctx, relayTransport: options.relayTransport ?? ctx.relayTransport };
    for (let round = 0; round < 10; round++) {
      const result = await advanceTask(local, taskId, steps);
      if (result !== "waiting") return;
      const task = await ctx.db.task.findUniqueOrThrow({ where: { id: taskId }, select: { state: true } });
      if (!steps[task.state]) return;
    }
  };
}

export function probeDepsFor(ctx: TaskRunContext, extra: Partial<TProbeDeps> = {}): TProbeDeps {
  return {
    db: ctx.db,
    env: ctx.env,
    substrate: ctx.substrate,
    runProbeTask: createProbeTaskDriver(ctx),
    readyTimeoutMs: ctx.readyTimeoutMs,
    ...extra,
  };
}

export async function runProbeJob(
  ctx: TaskRunContext,
  runId: string,
  extra: Partial<TProbeDeps> = {},
): Promise<"passed" | "failed"> {
  return executeProbeRun(probeDepsFor(ctx, extra), { runId });
}
