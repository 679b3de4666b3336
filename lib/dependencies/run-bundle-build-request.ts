/**
 * A worker runs one queued build request (bundle-build-requests.ts): claims it, builds (or reuses)
 * the bundle exactly as the CLI's `repo bundle build` does, and records the outcome on the
 * request. At the machine cap the request goes back to the queue with the reason shown to the
 * operator, and is tried again once the sweep sees a free slot — nothing was built or charged.
 */
import { isAppError } from "../errors";
import { logError } from "../log";
import { readMachineSlots } from "../machines/machine-slots";
import { buildRepositoryBundle } from "./build-repository-bundle";
import { beatBuildRequest, transitionBuildRequest } from "./bundle-build-requests";
import { rebuildFromCandidateLockfile } from "./rebuild-from-candidate";
import type { TDependencyDeps } from "./run-dependency-setup";
import { SETUP_RUN_HEARTBEAT_MS } from "./setup-run-heartbeat";

/** `not_queued`: not this runner's to run (another worker has it, or it ended) — or it ended while this one ran (the sweep failed it). */
export type TBuildRequestOutcome = "succeeded" | "failed" | "waiting" | "not_queued";

export async function runBundleBuildRequest(deps: TDependencyDeps, requestId: string): Promise<TBuildRequestOutcome> {
  const { db, substrate } = deps;
  const request = await db.bundleBuildRequest.findUnique({ where: { id: requestId }, include: { repository: true } });
  if (!request || request.state !== "queued") return "not_queued";
  // It waited for a slot before: another attempt only once one looks free (the claim still decides).
  if (request.waitingReason) {
    const slots = await readMachineSlots(db, substrate.label);
    if (slots.cap !== null && slots.inFlight >= slots.cap) return "waiting";
  }
  const attempts = request.attempts + 1;
  if (!(await transitionBuildRequest(db, null, request, "queued", "running", { attempts }))) return "not_queued";
  const running = { ...request, attempts };
  const heartbeat = setInterval(() => void beatBuildRequest(db, request.id).catch(() => undefined), SETUP_RUN_HEARTBEAT_MS);
  try {
    let isRecorded: boolean;
    if (request.kind === "candidate") {
      const bundle = await rebuildFromCandidateLockfile(deps, { candidateId: request.candidateId!, actorId: request.requestedById });
      isRecorded = await transitionBuildRequest(db, null, running, "running", "succeeded", {
        sourceSha: bundle.sourceSha,
        bundleId: bundle.id,
        isReused: false,
        setupRunId: bundle.setupRunId,
        waitingReason: null,
      });
    } else {
      const built = await buildRepositoryBundle(deps, {
        name: request.repository.name,
        ref: request.ref ?? undefined,
        isForced: request.isForced,
        actorId: request.requestedById,
      });
      isRecorded = await transitionBuildRequest(db, null, running, "running", "succeeded", {
        sourceSha: built.sha,
        bundleId: built.bundle.id,
        isReused: built.isReused,
        setupRunId: built.isReused ? null : built.bundle.setupRunId,
        waitingReason: null,
      });
    }
    return isRecorded ? "succeeded" : "not_queued";
  } catch (error) {
    if (isAppError(error) && error.code === "MACHINE_CAP_REACHED") {
      const { inFlight, cap } = (error.details ?? {}) as { inFlight?: number; cap?: number };
      await transitionBuildRequest(db, null, running, "running", "queued", {
        waitingReason: `Waiting for a free machine slot (${inFlight ?? "?"} of ${cap ?? "?"} on ${substrate.label} in use): it starts by itself when a task finishes, or raise "Concurrent machines per substrate" in the operator settings.`,
      });
      return "waiting";
    }
    if (!isAppError(error)) logError("bundle build request failed", error, { requestId });
    await transitionBuildRequest(db, null, running, "running", "failed", {
      errorCode: isAppError(error) ? error.code : "DEPENDENCY_SETUP_FAILED",
      errorSummary: isAppError(error) ? error.message : "The build failed unexpectedly; the worker's log has the details.",
      waitingReason: null,
    });
    return "failed";
  } finally {
    clearInterval(heartbeat);
  }
}
