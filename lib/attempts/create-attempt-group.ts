/**
 * Attempts (issue 26): one issue handed to several student agents (or one agent several times) at
 * once. Each attempt is an ordinary task — its own guests, relay capability, budgets and trusted
 * checks, admitted under the same machine cap in the same fair order — that also names the agent
 * profile version it runs and the group it belongs to. The group and every attempt are one
 * transaction: a group never exists with only some of its attempts.
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import { actorIdOf, type Actor } from "../contract/actor";
import type { Db } from "../db/client";
import type { TEnv } from "../env";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { insertTaskIn, prepareTask, ZCreateTaskSchema } from "../tasks/create-task";

/** More attempts than this would let one issue take the whole machine cap for a long time. */
export const MAX_ATTEMPTS_PER_GROUP = 8;

const ZAgentNamesSchema = z.preprocess(
  (v) =>
    typeof v === "string"
      ? v
          .split(",")
          .map((s) => s.trim())
          .filter(Boolean)
      : v,
  z
    .array(z.string().trim().min(1).max(100))
    .min(1, "Name at least one agent profile.")
    .max(MAX_ATTEMPTS_PER_GROUP, `At most ${MAX_ATTEMPTS_PER_GROUP} attempts per issue.`),
);

export const ZCreateAttemptGroupSchema = ZCreateTaskSchema.pick({
  repository: true,
  issueNumber: true,
  issueTitle: true,
  prompt: true,
  baseRef: true,
})
  .extend({
    /** profile names, in order; a name may repeat for several runs of one agent */
    agents: ZAgentNamesSchema,
  })
  .strict();
export type TCreateAttemptGroupInput = z.input<typeof ZCreateAttemptGroupSchema>;

export async function createAttemptGroup(
  deps: { db: Db; env: TEnv },
  { actor, ...fields }: TCreateAttemptGroupInput & { actor: Actor | null },
) {
  const actorId = actorIdOf(actor);
  const input = parseOrThrow(ZCreateAttemptGroupSchema, fields, { code: "VALIDATION_FAILED", label: "attempts" });
  const { db } = deps;
  const { agents, ...taskFields } = input;
  const names = [...new Set(agents)];
  const profiles = await db.agentProfile.findMany({ where: { name: { in: names } } });
  const missing = names.filter((name) => !profiles.some((p) => p.name === name));
  if (missing.length > 0)
    throw new AppError("VALIDATION_FAILED", `No agent profile named ${missing.join(", ")}.`, {
      fieldErrors: { agents: [`unknown: ${missing.join(", ")}`] },
    });
  // The version each attempt runs is fixed now: editing a profile later never changes a running attempt.
  const versions = await db.agentProfileVersion.findMany({
    where: { OR: profiles.map((p) => ({ profileId: p.id, version: p.currentVersion })) },
  });
  const versionOf = new Map(
    profiles.map((p) => [p.name, versions.find((v) => v.profileId === p.id && v.version === p.currentVersion)]),
  );
  for (const [name, version] of versionOf)
    if (!version)
      throw new AppError(
        "STATE_CONFLICT",
        `Agent profile ${name} has no version ${profiles.find((p) => p.name === name)?.currentVersion}.`,
      );
  const prepared = await prepareTask(deps, taskFields);

  return db.$transaction(async (tx) => {
    const group = await tx.attemptGroup.create({
      data: {
        repositoryId: prepared.repo.id,
        issueNumber: input.issueNumber,
        issueTitle: input.issueTitle,
        createdById: actorId,
      },
    });
    const tasks = [];
    for (const name of agents) {
      const version = versionOf.get(name)!;
      tasks.push(
        await insertTaskIn(tx, prepared, {
          actorId,
          attempt: { attemptGroupId: group.id, agentProfileVersionId: version.id },
        }),
      );
    }
    await recordAudit(tx, {
      actorId,
      action: "attempt.create",
      targetType: "attempt_group",
      targetId: group.id,
      detail: {
        repository: prepared.repo.name,
        issueNumber: input.issueNumber,
        agents,
        taskIds: tasks.map((t) => t.id),
      },
    });
    return { group, tasks };
  });
}
