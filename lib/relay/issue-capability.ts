/**
 * Issues a task-scoped relay capability. The handle is returned once and only its sha256 is
 * stored; the audit row names the capability and its limits, never the handle.
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import { actorIdOf, type Actor } from "../contract/actor";
import { DEFAULT_TASK_LIMITS } from "../contract/limits";
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { readSetting } from "../settings/operator-settings";
import { modelWorstCaseMicros, reserveModelSpend } from "../spend/model-spend";
import { generateHandle, hashHandle } from "./handle";
import {
  RELAY_MAX_BYTES_CEILING,
  RELAY_MAX_REQUEST_BYTES_CEILING,
  RELAY_MAX_REQUESTS_CEILING,
  RELAY_MAX_RESPONSE_BYTES_CEILING,
  RELAY_MAX_TOKENS_BUDGET_CEILING,
  RELAY_MAX_TTL_SECONDS,
  RELAY_OPERATIONS,
} from "./limits";
import { ZTaskIdSchema } from "./relay-request";

export const ZIssueCapabilitySchema = z
  .object({
    taskId: ZTaskIdSchema,
    allowedOps: z.array(z.enum(RELAY_OPERATIONS)).min(1).max(RELAY_OPERATIONS.length).default(["complete"]),
    maxRequests: z.number().int().min(1).max(RELAY_MAX_REQUESTS_CEILING),
    maxBytes: z.number().int().min(1).max(RELAY_MAX_BYTES_CEILING),
    maxRequestBytes: z.number().int().min(1).max(RELAY_MAX_REQUEST_BYTES_CEILING),
    maxResponseBytes: z.number().int().min(1).max(RELAY_MAX_RESPONSE_BYTES_CEILING),
    /** Input + output tokens over the capability's life (issue 25). */
    maxTokens: z
      .number()
      .int()
      .min(1)
      .max(RELAY_MAX_TOKENS_BUDGET_CEILING)
      .default(DEFAULT_TASK_LIMITS.relay.maxTokens),
    ttlSeconds: z.number().int().min(1).max(RELAY_MAX_TTL_SECONDS),
  })
  .strict();

export type TIssueCapabilityInput = z.input<typeof ZIssueCapabilitySchema>;

export type TIssuedCapability = { capabilityId: string; handle: string; deadlineAt: Date };

export async function issueCapability(
  deps: { db: Db },
  { actor = null, via = "system", ...fields }: TIssueCapabilityInput & { actor?: Actor | null; via?: string },
): Promise<TIssuedCapability> {
  const actorId = actorIdOf(actor);
  const { db } = deps;
  const limits = parseOrThrow(ZIssueCapabilitySchema, fields, { code: "VALIDATION_FAILED", label: "relay capability" });
  const task = await db.task.findUnique({ where: { id: limits.taskId }, select: { id: true } });
  if (!task) throw new AppError("NOT_FOUND", "No such task.");
  const handle = generateHandle();
  const allowedOps = [...new Set(limits.allowedOps)];
  const created = await db.$transaction(async (tx) => {
    // The price in force now binds the capability for its whole life; its worst case is reserved
    // against the spend ceilings in this transaction (a ceiling it would pass refuses the issue).
    const prices = await readSetting({ db: tx }, { key: "relay.pricing" });
    // The deadline is computed by the database clock, the same clock admission compares against.
    const rows = await tx.$queryRaw<{ id: string; deadlineAt: Date }[]>`
      INSERT INTO "RelayCapability" ("id", "taskId", "handleHash", "allowedOps", "maxRequests", "maxBytes", "maxRequestBytes", "maxResponseBytes",
                                     "maxTokens", "inputMicrosPerMTok", "outputMicrosPerMTok", "deadlineAt")
      VALUES (gen_random_uuid(), ${limits.taskId}::uuid, ${hashHandle(handle)}, ${allowedOps}::text[], ${limits.maxRequests}, ${BigInt(limits.maxBytes)}, ${limits.maxRequestBytes}, ${limits.maxResponseBytes},
              ${BigInt(limits.maxTokens)}, ${prices.inputMicrosPerMTok}, ${prices.outputMicrosPerMTok},
              now() + make_interval(secs => ${limits.ttlSeconds}))
      RETURNING "id", "deadlineAt"`;
    const row = rows[0]!;
    const modelReservedMicros = modelWorstCaseMicros(limits.maxTokens, prices);
    await reserveModelSpend(tx, { capabilityId: row.id, taskId: limits.taskId, amountMicros: modelReservedMicros });
    await recordAudit(tx, {
      actorId,
      action: "relay.issue",
      targetType: "relay_capability",
      targetId: row.id,
      detail: {
        via,
        taskId: limits.taskId,
        allowedOps,
        maxRequests: limits.maxRequests,
        maxBytes: limits.maxBytes,
        maxRequestBytes: limits.maxRequestBytes,
        maxResponseBytes: limits.maxResponseBytes,
        maxTokens: limits.maxTokens,
        prices,
        modelReservedMicros,
        ttlSeconds: limits.ttlSeconds,
      },
    });
    return row;
  });
  return { capabilityId: created.id, handle, deadlineAt: created.deadlineAt };
}
