/**
 * A worker (or the CLI, at once, in its own process: buildBundleNow) runs one queued build
 * request (bundle-build-requests.ts): claims it, builds (or reuses)
 * the bundle (buildRepositoryBundle / rebuildFromCandidateLockfile), and records the outcome on the
 * request. At the machine cap the request goes back to the queue with the reason shown to the
 * operator, and is tried again once the sweep sees a free slot — nothing was built or charged.
 */
import type { Actor } from "../contract/actor";
import type { BundleBuildRequest, DependencyBundle } from "../db/generated/client";
import { AppError, isAppError, isAppErrorCode } from "../errors";
import { logError } from "../log";
import { readMachineSlots } from "../machines/machine-slots";
import { buildRepositoryBundle } from "./build-repository-bundle";
import { keepRunAlive } from "../runs/run-heartbeat";
import { requestBundleBuild, transitionBuildRequest, type TBuildRequestInput } from "./bundle-build-requests";
import { rebuildFromCandidateLockfile } from "./rebuild-from-candidate";
import { parseSetupRecipe, type TDependencyDeps } from "./run-dependency-setup";

/**
 * `not_queued`: not this runner's to run (another worker has it, or it ended). `stopped`: it stopped
 * being running while this one ran it (an operator cancelled it, or the sweep failed it), and the
 * build was stopped.
 */
export type TBuildRequestOutcome = "succeeded" | "failed" | "waiting" | "not_queued" | "stopped";

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
  // A request that stops being `running` (cancelled by an operator) stops its build at the next
  // beat — every second (lib/runs/run-states.ts), so a cancel takes effect about as fast as the page shows it.
  const stop = new AbortController();
  const heartbeat = keepRunAlive(db, { kind: "bundle-build", id: request.id }, { onStopped: () => stop.abort() });
  const buildDeps: TDependencyDeps = { ...deps, signal: stop.signal };
  try {
    let isRecorded: boolean;
    if (request.kind === "candidate") {
      const bundle = await rebuildFromCandidateLockfile(buildDeps, {
        candidateId: request.candidateId!,
        actorId: request.requestedById,
      });
      isRecorded = await transitionBuildRequest(db, null, running, "running", "succeeded", {
        sourceSha: bundle.sourceSha,
        bundleId: bundle.id,
        isReused: false,
        setupRunId: bundle.setupRunId,
        waitingReason: null,
      });
    } else {
      const built = await buildRepositoryBundle(buildDeps, {
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
    return isRecorded ? "succeeded" : "stopped";
  } catch (error) {
    if (stop.signal.aborted) return "stopped";
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
      errorSummary: isAppError(error)
        ? error.message
        : "The build failed unexpectedly; the worker's log has the details.",
      waitingReason: null,
    });
    return "failed";
  } finally {
    heartbeat.stop();
  }
}

export type TFinishedBuild = { request: BundleBuildRequest; bundle: DependencyBundle; elapsedMs: number };

const FOLLOW_INTERVAL_MS = 500;
/** How long an operator's caller follows a build another process runs: its recipe's timeout and a margin. */
const FOLLOW_MARGIN_MS = 5 * 60_000;

/**
 * The CLI's "build now" (as `probe run` runs its probes): the same queued request the page makes,
 * run in this process — or followed to its end when a worker already has it. Answers the built or
 * reused bundle; a request that failed, was cancelled or waits for a machine slot is an error that
 * says so (a waiting one stays queued, and a worker starts it once a slot frees).
 */
export async function buildBundleNow(
  deps: TDependencyDeps,
  input: TBuildRequestInput & { actor: Actor | null },
): Promise<TFinishedBuild> {
  const { db } = deps;
  const { request } = await requestBundleBuild({ db }, { ...input, isRunByCaller: true });
  const outcome = await runBundleBuildRequest(deps, request.id);
  let current = await db.bundleBuildRequest.findUniqueOrThrow({ where: { id: request.id } });
  if (outcome === "not_queued") current = await followToItsEnd(db, current);
  if (current.state === "succeeded" && current.bundleId) {
    const bundle = await db.dependencyBundle.findUniqueOrThrow({ where: { id: current.bundleId } });
    const elapsedMs =
      current.startedAt && current.finishedAt ? current.finishedAt.getTime() - current.startedAt.getTime() : 0;
    return { request: current, bundle, elapsedMs };
  }
  if (current.state === "queued")
    throw new AppError(
      "MACHINE_CAP_REACHED",
      `${current.waitingReason ?? "Waiting for a free machine slot."} Build request ${current.id} stays queued: a worker starts it, and \`repo bundle show\` follows it.`,
    );
  if (current.state === "cancelled")
    throw new AppError(
      current.startedAt ? "BUILD_CANCELLED" : "STATE_CONFLICT",
      `Build request ${current.id} was cancelled ${current.startedAt ? "while it ran" : "before it started"}.`,
    );
  throw new AppError(
    current.errorCode && isAppErrorCode(current.errorCode) ? current.errorCode : "DEPENDENCY_SETUP_FAILED",
    current.errorSummary ?? "The build failed.",
  );
}

/** Another process runs it: read it again until it ends (or waits for a slot), for at most its recipe's timeout and a margin. */
async function followToItsEnd(db: TDependencyDeps["db"], request: BundleBuildRequest): Promise<BundleBuildRequest> {
  const repository = await db.targetRepository.findUniqueOrThrow({ where: { id: request.repositoryId } });
  const deadline =
    Date.now() + (parseSetupRecipe(repository.setupRecipe)?.timeoutSeconds ?? 600) * 1000 + FOLLOW_MARGIN_MS;
  let current = request;
  while (current.state === "running" || (current.state === "queued" && !current.waitingReason)) {
    if (Date.now() > deadline)
      throw new AppError(
        "STATE_CONFLICT",
        `Build request ${request.id} is still ${current.state}; \`repo bundle show\` follows it.`,
      );
    await new Promise((resolve) => setTimeout(resolve, FOLLOW_INTERVAL_MS));
    current = await db.bundleBuildRequest.findUniqueOrThrow({ where: { id: request.id } });
  }
  return current;
}
