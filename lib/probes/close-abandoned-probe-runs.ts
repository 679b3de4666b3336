/**
 * A probe run whose runner died (worker SIGKILL, CLI killed) is failed by the repo sweep
 * (failAbandonedProbeRuns: its heartbeat lapsed) — but the tasks it created (P1, P2, P4, P5 run
 * probe tasks) and the machines it started would stay where the dead runner left them: the
 * worker's sweep never drives a probe task, and the orphan sweep leaves a machine alone while its
 * task still looks active. So every probe task of a finished run that is not at rest is failed
 * here, with a reason naming the run, its relay capability revoked and its live machines (and the
 * run's own probe machines) destroyed — or quarantined when a destroy fails, as everywhere else.
 * Idempotent: it looks at finished runs, not at which sweep failed them, so a crash between the
 * run's failure and this cleanup is finished by the next sweep.
 */
import fs from "node:fs/promises";
import type { Db } from "../db/client";
import type { TaskState } from "../db/generated/enums";
import type { TEnv } from "../env";
import { isAppError } from "../errors";
import { logError, logWarn } from "../log";
import { destroyMachine, destroyTaskMachines } from "../machines/guest-machines";
import { LIVE_MACHINE_STATES } from "../machines/machine-states";
import { revokeCapability } from "../relay/revoke-capability";
import type { Substrate } from "../substrate/substrate";
import { stagingDir } from "../tasks/task-run-context";
import { canTransitionTask, TERMINAL_TASK_STATES } from "../tasks/task-states";
import { transitionTask } from "../tasks/transition-task";
import { failAbandonedProbeRuns } from "./probe-run.repo";
import { removeProbeTargetFiles } from "./probe-tasks";

export type TCloseAbandonedDeps = { db: Db; env: TEnv; substrate: Substrate };
export type TCloseAbandonedResult = { failedRuns: string[]; failedTasks: string[]; quarantinedMachines: string[] };

/** At rest: terminal, or waiting for a human — a finished run's task there needs nothing more. */
const AT_REST: readonly TaskState[] = [...TERMINAL_TASK_STATES, "review_pending"];

export async function closeAbandonedProbeRuns(
  deps: TCloseAbandonedDeps,
  input: { now?: Date } = {},
): Promise<TCloseAbandonedResult> {
  const { db, substrate } = deps;
  const failedRuns = await failAbandonedProbeRuns(db, input.now ?? new Date());
  const result: TCloseAbandonedResult = { failedRuns, failedTasks: [], quarantinedMachines: [] };

  // Probe tasks not at rest, kept only where their run has finished (a running run still drives its own).
  const unsettled = await db.task.findMany({
    where: { probeRunId: { not: null }, state: { notIn: [...AT_REST] } },
    select: { id: true, probeRunId: true },
  });
  const finishedRuns = new Set(
    (
      await db.probeRun.findMany({
        where: { id: { in: [...new Set(unsettled.map((t) => t.probeRunId!))] }, state: { in: ["passed", "failed"] } },
        select: { id: true },
      })
    ).map((r) => r.id),
  );
  for (const task of unsettled.filter((t) => finishedRuns.has(t.probeRunId!))) {
    const runId = task.probeRunId!;
    const why = `qualification probe run ${runId} was abandoned: its runner stopped before the run finished`;
    await revokeCapability({ db }, { taskId: task.id, reason: why, via: "probe sweep" }).catch((error) =>
      logError("revoke after an abandoned probe run failed", error, { taskId: task.id }),
    );
    const quarantined = await destroyTaskMachines(db, substrate, task.id, why);
    result.quarantinedMachines.push(...quarantined.map((m) => m.id));
    await fs.rm(stagingDir(deps.env, task.id), { recursive: true, force: true }).catch(() => undefined);
    const reason =
      quarantined.length > 0 ? `${why} (and ${quarantined.length} machine(s) quarantined after a failed destroy)` : why;
    if (await failTaskIfActive(db, task.id, reason)) result.failedTasks.push(task.id);
  }

  // The runs' own probe machines (P2, P3, P6 …): destroyed now rather than at the orphan sweep's grace.
  const machines = await db.guestMachine.findMany({
    where: {
      taskId: null,
      probeRunId: { not: null },
      probeRun: { state: { in: ["passed", "failed"] } },
      state: { in: [...LIVE_MACHINE_STATES] },
    },
    select: { id: true, probeRunId: true },
  });
  for (const machine of machines) {
    const destroyed = await destroyMachine(
      db,
      substrate,
      machine.id,
      `qualification probe run ${machine.probeRunId} ended`,
    );
    if (destroyed.state === "cleanup_quarantined") result.quarantinedMachines.push(machine.id);
  }
  for (const runId of failedRuns) await removeProbeTargetFiles(deps.env, runId).catch(() => undefined);
  if (result.failedTasks.length || result.quarantinedMachines.length)
    logWarn("closed what abandoned probe runs left behind", { ...result });
  return result;
}

/** Compare-and-set against whatever state the task is in now; a task that moved meanwhile is retried. */
async function failTaskIfActive(db: Db, taskId: string, reason: string): Promise<boolean> {
  for (let attempt = 0; attempt < 3; attempt++) {
    const { state } = await db.task.findUniqueOrThrow({ where: { id: taskId }, select: { state: true } });
    if (AT_REST.includes(state) || !canTransitionTask(state, "failed")) return false;
    try {
      await transitionTask(db, { taskId, from: state, to: "failed", reason, errorCode: "PROBE_RUN_ABANDONED" });
      return true;
    } catch (error) {
      if (!(isAppError(error) && error.code === "STATE_CONFLICT")) throw error;
    }
  }
  return false;
}
