/**
 * GuestResult v1: the only structured data a guest may return (seed 000, "Result"). It is
 * hostile input: strict, bounded, and checked against the request it answers. The candidate's
 * identity is never taken from here — the control plane computes it from git after import;
 * the declared paths only have to agree with what it observes.
 */
import { z } from "zod";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { GUEST_CANDIDATE_ARCHIVE } from "./guest-layout";
import { ZFullShaSchema, ZRepositoryNameSchema, type TTaskRequest } from "./task-request";

export const GUEST_RESULT_LIMITS = {
  diagnosticsChars: 4096,
  summaryChars: 8192,
  changedPaths: 10_000,
  pathChars: 4096,
  supplementalChecks: 20,
  excerptChars: 8192,
} as const;

const ZSupplementalCheckSchema = z
  .object({
    supplemental: z.literal(true),
    name: z.string().max(200),
    command: z.string().max(1000),
    exitCode: z.number().int().nullable(),
    outputExcerpt: z.string().max(GUEST_RESULT_LIMITS.excerptChars),
  })
  .strict();

export const ZGuestResultSchema = z
  .object({
    v: z.literal(1),
    taskId: z.uuid(),
    repository: ZRepositoryNameSchema,
    baseSha: ZFullShaSchema,
    guestExecutionId: z.string().min(1).max(200),
    status: z.enum(["completed", "agent_failed", "agent_timeout"]),
    diagnostics: z.string().max(GUEST_RESULT_LIMITS.diagnosticsChars),
    candidate: z
      .object({
        archivePath: z.literal(GUEST_CANDIDATE_ARCHIVE),
        archiveSha256: z.string().regex(/^[0-9a-f]{64}$/),
        archiveBytes: z.number().int().min(0),
        changedPaths: z
          .array(z.string().min(1).max(GUEST_RESULT_LIMITS.pathChars))
          .max(GUEST_RESULT_LIMITS.changedPaths),
      })
      .strict()
      .nullable(),
    studentReport: z
      .object({ summary: z.string().max(GUEST_RESULT_LIMITS.summaryChars) })
      .strict()
      .nullable(),
    supplementalChecks: z.array(ZSupplementalCheckSchema).max(GUEST_RESULT_LIMITS.supplementalChecks),
  })
  .strict();

/**
 * GuestResult v2 answers a TaskRequest v2 (a revision round): v1's fields plus the round it
 * answers. Its candidate.changedPaths are relative to the tree the guest received (the request's
 * startSha), not to the base: that is all a guest can observe.
 */
export const ZGuestResultV2Schema = ZGuestResultSchema.extend({
  v: z.literal(2),
  round: z.number().int().min(2),
}).strict();

export type TGuestResult = z.infer<typeof ZGuestResultSchema> | z.infer<typeof ZGuestResultV2Schema>;

const ZAnyGuestResultSchema = z.discriminatedUnion("v", [ZGuestResultSchema, ZGuestResultV2Schema]);

/** The round a result answers: a v1 result can only answer round 1. */
export function roundOfGuestResult(result: TGuestResult): number {
  return result.v === 2 ? result.round : 1;
}

/**
 * Parses raw bytes and checks them against the request; any disagreement is a named failure.
 * `request.round` defaults to 1; a result for another round (a stale guest, a replayed file) is refused.
 */
export function parseGuestResult(
  bytes: Buffer,
  request: Pick<TTaskRequest, "taskId" | "repository" | "baseSha"> & { round?: number },
  maxBytes: number,
): TGuestResult {
  if (bytes.length > maxBytes)
    throw new AppError("CONTRACT_VIOLATION", `result.json is ${bytes.length} bytes, over the ${maxBytes}-byte limit`, {
      reason: "RESULT_TOO_LARGE",
    });
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new AppError("CONTRACT_VIOLATION", "result.json is not valid JSON", { reason: "RESULT_MALFORMED" });
  }
  const result = parseOrThrow(ZAnyGuestResultSchema, json, {
    code: "CONTRACT_VIOLATION",
    label: "result.json (GuestResult v1/v2)",
    details: { reason: "RESULT_SCHEMA" },
  });
  for (const field of ["taskId", "repository", "baseSha"] as const) {
    if (result[field] !== request[field])
      throw new AppError(
        "CONTRACT_VIOLATION",
        `result.json names ${field} ${JSON.stringify(result[field]).slice(0, 100)}, the request was for ${request[field]}`,
        { reason: "RESULT_DISAGREES" },
      );
  }
  const expectedRound = request.round ?? 1;
  if (roundOfGuestResult(result) !== expectedRound) {
    throw new AppError(
      "CONTRACT_VIOLATION",
      `result.json answers round ${roundOfGuestResult(result)}, the request was for round ${expectedRound}`,
      { reason: "RESULT_DISAGREES" },
    );
  }
  return result;
}
