/**
 * Creating a task: the control plane resolves the base ref to a full SHA in its own mirror,
 * snapshots the operator's limits onto the task (with the version they came from and any per-task
 * overrides within the operator's maxima), and records `queued` with a fresh operation id.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { recordAudit } from "../audit";
import { actorIdOf, type Actor } from "../contract/actor";
import { MAX_PROMPT_CHARS } from "../contract/task-request";
import type { Db, DbTx } from "../db/client";
import type { TEnv } from "../env";
import { parseOrThrow } from "../parse-or-throw";
import { resolveBaseRef, syncMirror } from "../repos/mirror";
import { getTargetRepositoryOrThrow } from "../repos/target-repositories";
import { readSetting, readSettingVersion } from "../settings/operator-settings";
import { ZTaskLimitsSchema } from "../contract/limits";
import { AppError } from "../errors";
import { readMirrorCredential } from "../repos/mirror-credentials";
import { notifyWorkReady } from "../db/work-ready";
import { resolveAgentProfileVersion } from "../agents/agent-profiles.repo";

const ZOptionalIntSchema = z.preprocess(
  (v) => (v === "" || v === null ? undefined : v),
  z.coerce.number().int("a whole number").min(1, "at least 1").optional(),
);

const OVERRIDABLE = ["wallClockSeconds", "cpus", "memoryMb", "diskGb"] as const;

export const ZCreateTaskSchema = z
  .object({
    repository: z.string().trim().min(3).max(200),
    issueNumber: z.coerce.number().int().min(1).max(10_000_000),
    issueTitle: z.string().trim().min(1).max(500),
    prompt: z.string().max(MAX_PROMPT_CHARS, `The issue text is limited to ${MAX_PROMPT_CHARS} characters.`),
    baseRef: z.string().trim().max(250).optional(),
    // Per-task overrides of the operator's limits; empty = the operator's value. Checked against
    // the operator's maxima (task.overrideMaxima) below, each refusal next to its field.
    wallClockSeconds: ZOptionalIntSchema,
    cpus: ZOptionalIntSchema,
    memoryMb: ZOptionalIntSchema,
    diskGb: ZOptionalIntSchema,
    // The agent profile to run (issue 26); empty = the operator's default, the guest.agent setting.
    agent: z.preprocess((v) => (v === "" || v === null ? undefined : v), z.string().trim().min(1).max(100).optional()),
  })
  .strict();
export type TCreateTaskInput = z.input<typeof ZCreateTaskSchema>;

/** What a task needs that is read outside the transaction: the repository, limits and base SHA. */
export type TPreparedTask = Awaited<ReturnType<typeof prepareTask>>;

/**
 * Validates the input, snapshots the limits and resolves the base ref in the mirror — everything a
 * task row needs that is read outside its transaction. Attempts (issue 26) prepare once and insert
 * one task per attempt in a single transaction.
 */
export async function prepareTask(deps: { db: Db; env: TEnv }, fields: TCreateTaskInput) {
  const input = parseOrThrow(ZCreateTaskSchema, fields, { code: "VALIDATION_FAILED", label: "task" });
  const { db, env } = deps;
  const repo = await getTargetRepositoryOrThrow({ db }, { name: input.repository });
  if (repo.isDisabled)
    throw new AppError("STATE_CONFLICT", `Repository ${repo.name} is disabled: it takes no new tasks.`);
  const [baseLimits, limitsVersion, maxima] = await Promise.all([
    readSetting({ db }, { key: "task.limits" }),
    readSettingVersion({ db }, { key: "task.limits" }),
    readSetting({ db }, { key: "task.overrideMaxima" }),
  ]);
  const overrides = Object.fromEntries(
    OVERRIDABLE.flatMap((key) => (input[key] === undefined ? [] : [[key, input[key]]])),
  ) as Partial<Record<(typeof OVERRIDABLE)[number], number>>;
  const fieldErrors: Record<string, string[]> = {};
  for (const [key, value] of Object.entries(overrides) as [(typeof OVERRIDABLE)[number], number][]) {
    if (value > maxima[key])
      fieldErrors[key] = [`at most ${maxima[key]} (the operator's maximum for a per-task override)`];
  }
  if (Object.keys(fieldErrors).length > 0)
    throw new AppError("VALIDATION_FAILED", "A limit override is above the operator's maximum.", { fieldErrors });
  const limits = parseOrThrow(
    ZTaskLimitsSchema,
    { ...baseLimits, ...overrides },
    { code: "VALIDATION_FAILED", label: "task limits" },
  );
  const mirror = await syncMirror({
    db,
    dataDir: env.dataDir,
    repository: repo.name,
    source: { cloneUrl: repo.cloneUrl, credential: await readMirrorCredential(db, env.dataDir) },
  });
  const baseRef = input.baseRef || repo.defaultBranch;
  const baseSha = await resolveBaseRef(mirror, baseRef);
  const hasOverrides = Object.keys(overrides).length > 0;
  return { repo, input, baseRef, baseSha, limits, limitsVersion, overrides, hasOverrides };
}

/**
 * Records one prepared task as `queued` with a fresh operation id (and its audit row and the
 * worker's wake-up) inside the caller's transaction. `attempt` ties it to an attempt group and
 * the agent profile version it runs (issue 26).
 */
export async function insertTaskIn(
  tx: DbTx,
  prepared: TPreparedTask,
  options: {
    actorId: string | null;
    attempt?: { attemptGroupId: string; agentProfileVersionId: string };
    /** a task of its own that runs an agent profile (`task create --agent`) */
    agent?: { agentProfileVersionId: string; name: string; version: number };
  },
) {
  const { repo, input, baseRef, baseSha, limits, limitsVersion, overrides, hasOverrides } = prepared;
  const { actorId } = options;
  const operationId = randomUUID();
  const task = await tx.task.create({
    data: {
      repositoryId: repo.id,
      issueNumber: input.issueNumber,
      issueTitle: input.issueTitle,
      prompt: input.prompt,
      baseRef,
      baseSha,
      operationId,
      limits,
      limitsVersion,
      ...(hasOverrides ? { limitsOverrides: overrides } : {}),
      relayChannel: limits.relayChannel,
      createdById: actorId,
      ...(options.attempt ?? {}),
      ...(options.agent ? { agentProfileVersionId: options.agent.agentProfileVersionId } : {}),
    },
  });
  await tx.taskTransition.create({
    data: { taskId: task.id, fromState: null, toState: "queued", operationId, attempt: 0, reason: "created" },
  });
  await recordAudit(tx, {
    actorId: actorId,
    action: "task.create",
    targetType: "task",
    targetId: task.id,
    detail: {
      repository: repo.name,
      issueNumber: input.issueNumber,
      baseRef,
      baseSha,
      limitsVersion,
      ...(hasOverrides ? { limitsOverrides: overrides } : {}),
      ...(options.attempt ?? {}),
      ...(options.agent ? { agent: { name: options.agent.name, version: options.agent.version } } : {}),
    },
  });
  // The worker hears of the task when this transaction commits, and starts its job at once.
  await notifyWorkReady(tx, { kind: "task", id: task.id });
  return task;
}

export async function createTask(
  deps: { db: Db; env: TEnv },
  { actor, ...fields }: TCreateTaskInput & { actor: Actor | null },
) {
  const prepared = await prepareTask(deps, fields);
  // The profile's current version now: the task keeps it even when the profile is edited later.
  const version = prepared.input.agent ? await resolveAgentProfileVersion(deps.db, prepared.input.agent) : null;
  const agent = version
    ? { agentProfileVersionId: version.id, name: version.profile.name, version: version.version }
    : undefined;
  return deps.db.$transaction((tx) => insertTaskIn(tx, prepared, { actorId: actorIdOf(actor), agent }));
}
