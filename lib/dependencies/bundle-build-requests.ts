/**
 * An operator's "Build bundle now" or "Build from a candidate's lockfile" (issue 18) is a queued
 * request, run by a worker (run-bundle-build-request.ts), not work done inside a web request: a
 * build takes up to its recipe's timeout, must survive the web process that asked for it, and
 * must wait — not be refused — while every machine slot is in use (issue 16, item 3: the web
 * tier holds no work). The same request asked twice while one is queued or running is that one.
 *
 * A request is a background run of kind "bundle-build" (lib/runs: its states and transition table,
 * claim, heartbeat, the abandon sweep and the work-ready announcement); each transition is one
 * guarded UPDATE (`where state = from`) in a transaction with its audit row; the request id plus
 * the attempt number is the operation id.
 */
import { actorIdOf, type Actor } from "../contract/actor";
import type { Db } from "../db/client";
import type { BundleBuildRequest, RunState } from "../db/generated/client";
import { recordAudit } from "../audit";
import { AppError } from "../errors";
import { boundText } from "../redact";
import { announceQueuedRun } from "../runs/run-queue";
import { ACTIVE_RUN_STATES } from "../runs/run-states";
import { sweepAbandonedRuns } from "../runs/sweep-abandoned-runs";
import { transitionRun } from "../runs/transition-run";
import { parseSetupRecipe } from "./run-dependency-setup";

export type TBuildRequestInput =
  | { kind: "base"; repository: string; ref?: string | null; isForced?: boolean }
  | { kind: "candidate"; candidateId: string };

export type TRequestedBuild = { request: BundleBuildRequest; isExisting: boolean };

const MAX_REF_CHARS = 200;

/**
 * Queues a build (or answers the identical one already queued or running); refuses what can never
 * build. A new request is announced to the workers in its own transaction (lib/db/work-ready.ts),
 * so one starts it at once — unless `isRunByCaller` (the CLI runs it in its own process).
 */
export async function requestBundleBuild(
  deps: { db: Db },
  input: TBuildRequestInput & { actor: Actor | null; isRunByCaller?: boolean },
): Promise<TRequestedBuild> {
  const { db } = deps;
  const target = await resolveTarget(db, input);
  return db.$transaction(async (tx) => {
    // Two clicks at once make one request: the repository row serialises them.
    await tx.$queryRaw`select 1 from "TargetRepository" where id = ${target.repositoryId}::uuid for update`;
    const existing = await tx.bundleBuildRequest.findFirst({
      where: { ...target.identity, state: { in: [...ACTIVE_RUN_STATES] } },
      orderBy: { createdAt: "asc" },
    });
    if (existing) return { request: existing, isExisting: true };
    const actorId = actorIdOf(input.actor);
    const request = await tx.bundleBuildRequest.create({ data: { ...target.identity, requestedById: actorId } });
    await recordAudit(tx, {
      actorId,
      action: "dependencies.build.requested",
      targetType: "repository",
      targetId: target.repositoryId,
      detail: {
        requestId: request.id,
        kind: request.kind,
        ref: request.ref,
        candidateId: request.candidateId,
        isForced: request.isForced,
      },
    });
    if (!input.isRunByCaller) await announceQueuedRun(tx, { kind: "bundle-build", id: request.id });
    return { request, isExisting: false };
  });
}

async function resolveTarget(db: Db, input: TBuildRequestInput) {
  if (input.kind === "candidate") {
    const candidate = await db.candidate.findUnique({
      where: { id: input.candidateId },
      select: { id: true, repository: true },
    });
    if (!candidate) throw new AppError("NOT_FOUND", "No such candidate.");
    const repo = await buildableRepository(db, candidate.repository);
    return {
      repositoryId: repo.id,
      identity: { repositoryId: repo.id, kind: "candidate", ref: null, candidateId: candidate.id, isForced: false },
    };
  }
  const ref = input.ref?.trim() || null;
  if (ref !== null && (ref.length > MAX_REF_CHARS || !/^[A-Za-z0-9._/-]+$/.test(ref) || ref.startsWith("-")))
    throw new AppError(
      "VALIDATION_FAILED",
      `The ref must be a branch name or a commit (letters, digits, . _ / -; at most ${MAX_REF_CHARS}).`,
    );
  const repo = await buildableRepository(db, input.repository);
  return {
    repositoryId: repo.id,
    identity: { repositoryId: repo.id, kind: "base", ref, candidateId: null, isForced: input.isForced ?? false },
  };
}

async function buildableRepository(db: Db, name: string) {
  const repo = await db.targetRepository.findUnique({ where: { name: name.trim().toLowerCase() } });
  if (!repo || repo.probeRunId) throw new AppError("NOT_FOUND", `No target repository ${boundText(name, 200)}.`);
  if (!parseSetupRecipe(repo.setupRecipe))
    throw new AppError(
      "VALIDATION_FAILED",
      `${repo.name} has no setup recipe: set one first (\`schoolcore repo setup\`, or the repository's dependencies page).`,
    );
  return repo;
}

/**
 * One guarded transition with its audit row (lib/runs/transition-run.ts). Answers false when the
 * request was not in `from` (another worker claimed it, the sweep failed it): the caller then does
 * nothing.
 */
export async function transitionBuildRequest(
  db: Db,
  actorId: string | null,
  request: Pick<BundleBuildRequest, "id" | "repositoryId" | "attempts">,
  from: RunState,
  to: RunState,
  data: Partial<
    Pick<
      BundleBuildRequest,
      "waitingReason" | "sourceSha" | "bundleId" | "isReused" | "setupRunId" | "errorCode" | "errorSummary"
    >
  > & {
    attempts?: number;
  } = {},
): Promise<boolean> {
  return transitionRun(db, {
    kind: "bundle-build",
    id: request.id,
    from,
    to,
    data: {
      ...data,
      ...(data.errorSummary ? { errorSummary: boundText(data.errorSummary, 2048) } : {}),
      ...(data.waitingReason ? { waitingReason: boundText(data.waitingReason, 1024) } : {}),
    },
    audit: {
      actorId,
      action: `dependencies.build.${to}`,
      targetType: "repository",
      targetId: request.repositoryId,
      detail: {
        requestId: request.id,
        operationId: `${request.id}:${data.attempts ?? request.attempts}`,
        from,
        ...(data.errorCode ? { errorCode: data.errorCode } : {}),
        ...(data.bundleId ? { bundleId: data.bundleId } : {}),
      },
    },
  });
}

/** Running requests whose worker died are failed by the kernel's sweep, never left "running". */
export async function failAbandonedBuildRequests(db: Db, now = new Date()): Promise<string[]> {
  return sweepAbandonedRuns(db, {
    kind: "bundle-build",
    now,
    abandon: (request, reason) => ({
      data: {
        errorCode: "DEPENDENCY_SETUP_FAILED",
        errorSummary: `The build request was abandoned: ${reason}. Ask for the build again.`,
      },
      audit: {
        actorId: null,
        action: "dependencies.build.failed",
        targetType: "repository",
        targetId: request.repositoryId,
        detail: {
          requestId: request.id,
          operationId: `${request.id}:${request.attempts}`,
          from: "running",
          errorCode: "DEPENDENCY_SETUP_FAILED",
        },
      },
    }),
  });
}

/**
 * An operator withdraws a request: a queued one never starts; a running one is marked cancelled at
 * once, and its runner — which sees it at its next heartbeat (within a second) — destroys the builder and
 * fails the setup run as BUILD_CANCELLED, so nothing it made is kept. An ended request stays as it is.
 */
export async function cancelBundleBuildRequest(
  deps: { db: Db },
  input: { requestId: string; actor: Actor | null },
): Promise<{ from: "queued" | "running" }> {
  const request = await deps.db.bundleBuildRequest.findUnique({ where: { id: input.requestId } });
  if (!request) throw new AppError("NOT_FOUND", "No such build request.");
  // Each transition is guarded by its `from`: a request a worker claims meanwhile is cancelled as running.
  const actorId = actorIdOf(input.actor);
  if (await transitionBuildRequest(deps.db, actorId, request, "queued", "cancelled", { waitingReason: null }))
    return { from: "queued" };
  if (await transitionBuildRequest(deps.db, actorId, request, "running", "cancelled", { waitingReason: null }))
    return { from: "running" };
  const ended = await deps.db.bundleBuildRequest.findUniqueOrThrow({
    where: { id: input.requestId },
    select: { state: true },
  });
  throw new AppError("STATE_CONFLICT", `This build request has ended (${ended.state}); it stays as it is.`);
}
