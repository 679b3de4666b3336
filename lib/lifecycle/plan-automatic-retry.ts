/**
 * After a task is blocked: a transient provider error (a 5xx, a rate limit, a timeout or reset
 * whose create was reconciled) may be retried automatically, up to the operator's count
 * (`task.retry`), waiting backoff × 2^n. Anything else — integrity failures above all, but also
 * spend ceilings, configuration and refusals — waits for an operator. The retry itself is made
 * by the worker's sweep through retryTask, as a new attempt.
 */
import type { Db } from "../db/client";
import { readSetting } from "../settings/operator-settings";
import { isSubstrateError, type SubstrateErrorCode } from "../substrate/substrate-error";

const TRANSIENT_SUBSTRATE_CODES: readonly SubstrateErrorCode[] = [
  "SUBSTRATE_INTERNAL",
  "SUBSTRATE_UNAVAILABLE",
  "SUBSTRATE_RATE_LIMITED",
  "SUBSTRATE_TIMEOUT",
  "SUBSTRATE_NETWORK",
];

export function isTransientProviderError(error: unknown): boolean {
  return isSubstrateError(error) && TRANSIENT_SUBSTRATE_CODES.includes(error.substrateCode);
}

/**
 * Issue 17: the guest vanished, failed to start or never became ready while the task was still
 * provisioning — before any student code ran, so nothing the student did can have caused it
 * (a whole-system crash loses every guest being started). Retried like a transient error. Once
 * the task is running, a guest that failed or never answered is not: the student's code may be
 * what ended it. A guest the provider no longer knows at all (404) is different: a guest cannot
 * delete itself from the provider — it holds no credential — and the provider's own sweep comes
 * only after the task's deadline plus a grace (the machine's TTL). So NOT_FOUND before the task's
 * deadline is the provider losing it (a crash of the substrate itself) in any state.
 */
const PRE_STUDENT_SUBSTRATE_CODES: readonly SubstrateErrorCode[] = [
  "SUBSTRATE_MACHINE_FAILED",
  "SUBSTRATE_NOT_READY",
  "SUBSTRATE_NOT_FOUND",
];
const PRE_STUDENT_STATES: readonly string[] = ["queued", "provisioning"];

export function isRetryableInfrastructureFailure(
  error: unknown,
  failedFrom: string | undefined,
  beforeDeadline: boolean = false,
): boolean {
  if (isTransientProviderError(error)) return true;
  if (!isSubstrateError(error) || failedFrom === undefined) return false;
  if (PRE_STUDENT_STATES.includes(failedFrom)) return PRE_STUDENT_SUBSTRATE_CODES.includes(error.substrateCode);
  return beforeDeadline && error.substrateCode === "SUBSTRATE_NOT_FOUND";
}

/** Returns when the retry is planned, or null when none is (not transient, or the count is used up). */
export async function planAutomaticRetry(
  deps: { db: Db; now?: () => Date },
  input: { taskId: string; error: unknown; failedFrom?: string },
): Promise<Date | null> {
  const task = await deps.db.task.findUnique({
    where: { id: input.taskId },
    select: { state: true, autoRetryCount: true, probeRunId: true, deadlineAt: true },
  });
  const now = (deps.now ?? (() => new Date()))();
  const beforeDeadline = task?.deadlineAt != null && now.getTime() < task.deadlineAt.getTime();
  if (!isRetryableInfrastructureFailure(input.error, input.failedFrom, beforeDeadline)) return null;
  const policy = await readSetting(deps, { key: "task.retry" });
  // A probe's own task is judged as it ran: never retried behind the probe's back.
  if (!task || task.state !== "blocked" || task.probeRunId || task.autoRetryCount >= policy.maxAutomaticRetries)
    return null;
  const at = new Date(now.getTime() + policy.backoffSeconds * 1000 * 2 ** task.autoRetryCount);
  const updated = await deps.db.task.updateMany({
    where: { id: input.taskId, state: "blocked", autoRetryAt: null },
    data: { autoRetryAt: at },
  });
  return updated.count === 1 ? at : null;
}
