/**
 * Every failure ends visibly: the relay capability is revoked, every live guest of the task is
 * destroyed (or quarantined), and the task moves to `blocked` (infrastructure: provider, relay,
 * configuration, spend) or `failed` (integrity: contract, archive, identity, guest timeout or
 * death, cancellation) with a bounded, redacted reason and its operation id. Never a success.
 */
import fs from "node:fs/promises";
import type { TaskState } from "../db/generated/enums";
import { isAppError, type AppErrorCode } from "../errors";
import { logError } from "../log";
import { revokeCapability } from "../relay/revoke-capability";
import { destroyTaskMachines } from "../machines/guest-machines";
import { canTransitionTask } from "../tasks/task-states";
import { stagingDir, type TaskRunContext } from "../tasks/task-run-context";
import { transitionTask } from "../tasks/transition-task";
import { planAutomaticRetry } from "./plan-automatic-retry";

const FAILED_CODES: readonly AppErrorCode[] = [
  "CONTRACT_VIOLATION",
  "ARCHIVE_REFUSED",
  "CANDIDATE_MISMATCH",
  "CANDIDATE_EMPTY",
  "CANDIDATE_PROTECTED_PATH",
  "GUEST_TIMEOUT",
  "GUEST_PROCESS_DIED",
  "TASK_CANCELLED",
  "VALIDATION_FAILED",
];

export function failureStateFor(error: unknown): "blocked" | "failed" {
  return isAppError(error) && FAILED_CODES.includes(error.code) ? "failed" : "blocked";
}

export function failureCodeOf(error: unknown): string {
  if (isAppError(error)) {
    const substrateCode = (error as { substrateCode?: string }).substrateCode;
    const reason = (error.details as { reason?: unknown } | undefined)?.reason;
    return (
      substrateCode ??
      (typeof reason === "string" && /^[A-Z_]{3,60}$/.test(reason) ? `${error.code}:${reason}` : error.code)
    );
  }
  return "INTERNAL";
}

export async function failTask(
  deps: Pick<TaskRunContext, "db" | "env" | "substrate">,
  input: { taskId: string; error: unknown },
): Promise<void> {
  const { db, substrate } = deps;
  const { taskId, error } = input;
  const message = isAppError(error) ? error.message : "An internal error occurred (details are in the worker log).";
  if (!isAppError(error)) logError("task step failed unexpectedly", error, { taskId });
  await revokeCapability({ db }, { taskId, reason: `task ended: ${failureCodeOf(error)}`, via: "lifecycle" }).catch(
    (e) => logError("revoke failed", e, { taskId }),
  );
  const quarantined = await destroyTaskMachines(db, substrate, taskId, `task ended: ${failureCodeOf(error)}`).catch(
    (e) => {
      logError("destroy after failure failed", e, { taskId });
      return [];
    },
  );
  await fs.rm(stagingDir(deps.env, taskId), { recursive: true, force: true }).catch(() => undefined);
  const to = failureStateFor(error);
  const reason =
    quarantined.length > 0
      ? `${message} (and ${quarantined.length} machine(s) quarantined after a failed destroy)`
      : message;
  // The task may have moved meanwhile (a cancel); retry against what it is now, unless terminal.
  for (let attempt = 0; attempt < 3; attempt++) {
    const task = await db.task.findUniqueOrThrow({ where: { id: taskId }, select: { state: true } });
    if (!canTransitionTask(task.state as TaskState, to)) return;
    try {
      await transitionTask(db, { taskId, from: task.state as TaskState, to, reason, errorCode: failureCodeOf(error) });
      if (to === "blocked")
        await planAutomaticRetry({ db }, { taskId, error, failedFrom: task.state }).catch((e) =>
          logError("planning an automatic retry failed", e, { taskId }),
        );
      return;
    } catch (transitionError) {
      if (!(isAppError(transitionError) && transitionError.code === "STATE_CONFLICT")) throw transitionError;
    }
  }
}
