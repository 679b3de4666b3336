/**
 * Creating a task: the control plane resolves the base ref to a full SHA in its own mirror,
 * snapshots the operator's limits onto the task, and records `queued` with a fresh operation id.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { recordAudit } from "../audit";
import { MAX_PROMPT_CHARS } from "../contract/task-request";
import type { Db } from "../db/client";
import type { TEnv } from "../env";
import { AppError } from "../errors";
import { resolveBaseRef, syncMirror } from "../repos/mirror";
import { getTargetRepositoryOrThrow } from "../repos/target-repositories";
import { readSetting } from "../settings/operator-settings";
import { readMirrorToken } from "../repos/mirror-credentials";

export const ZCreateTaskSchema = z
  .object({
    repository: z.string().trim().min(3).max(200),
    issueNumber: z.coerce.number().int().min(1).max(10_000_000),
    issueTitle: z.string().trim().min(1).max(500),
    prompt: z.string().max(MAX_PROMPT_CHARS, `The issue text is limited to ${MAX_PROMPT_CHARS} characters.`),
    baseRef: z.string().trim().max(250).optional(),
  })
  .strict();
export type TCreateTaskInput = z.input<typeof ZCreateTaskSchema>;

export async function createTask(options: { db: Db; env: TEnv; input: unknown; actorId: string | null }) {
  const parsed = ZCreateTaskSchema.safeParse(options.input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AppError("VALIDATION_FAILED", `${issue.path.join(".") || "input"}: ${issue.message}`);
  }
  const { db, env } = options;
  const input = parsed.data;
  const repo = await getTargetRepositoryOrThrow(db, input.repository);
  const mirror = await syncMirror({ dataDir: env.dataDir, repository: repo.name, source: { cloneUrl: repo.cloneUrl, token: await readMirrorToken(db) } });
  const baseRef = input.baseRef || repo.defaultBranch;
  const baseSha = await resolveBaseRef(mirror, baseRef);
  const limits = await readSetting(db, "task.limits");
  const operationId = randomUUID();

  return db.$transaction(async (tx) => {
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
        relayChannel: limits.relayChannel,
        createdById: options.actorId,
      },
    });
    await tx.taskTransition.create({ data: { taskId: task.id, fromState: null, toState: "queued", operationId, attempt: 0, reason: "created" } });
    await recordAudit(tx, { actorId: options.actorId, action: "task.create", targetType: "task", targetId: task.id, detail: { repository: repo.name, issueNumber: input.issueNumber, baseRef, baseSha } });
    return task;
  });
}
