/**
 * GuestResult v1: the only structured data a guest may return (seed 000, "Result"). It is
 * hostile input: strict, bounded, and checked against the request it answers. The candidate's
 * identity is never taken from here — the control plane computes it from git after import;
 * the declared paths only have to agree with what it observes.
 */
import { z } from "zod";
import { AppError } from "../errors";
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
        archivePath: z.literal("/tmp/school-core-candidate.tar"),
        archiveSha256: z.string().regex(/^[0-9a-f]{64}$/),
        archiveBytes: z.number().int().min(0),
        changedPaths: z.array(z.string().min(1).max(GUEST_RESULT_LIMITS.pathChars)).max(GUEST_RESULT_LIMITS.changedPaths),
      })
      .strict()
      .nullable(),
    studentReport: z.object({ summary: z.string().max(GUEST_RESULT_LIMITS.summaryChars) }).strict().nullable(),
    supplementalChecks: z.array(ZSupplementalCheckSchema).max(GUEST_RESULT_LIMITS.supplementalChecks),
  })
  .strict();

export type TGuestResult = z.infer<typeof ZGuestResultSchema>;

/** Parses raw bytes and checks them against the request; any disagreement is a named failure. */
export function parseGuestResult(bytes: Buffer, request: Pick<TTaskRequest, "taskId" | "repository" | "baseSha">, maxBytes: number): TGuestResult {
  if (bytes.length > maxBytes) throw new AppError("CONTRACT_VIOLATION", `result.json is ${bytes.length} bytes, over the ${maxBytes}-byte limit`, { reason: "RESULT_TOO_LARGE" });
  let json: unknown;
  try {
    json = JSON.parse(bytes.toString("utf8"));
  } catch {
    throw new AppError("CONTRACT_VIOLATION", "result.json is not valid JSON", { reason: "RESULT_MALFORMED" });
  }
  const parsed = ZGuestResultSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new AppError("CONTRACT_VIOLATION", `result.json breaks the GuestResult v1 contract at ${issue.path.join(".") || "(root)"}: ${issue.message}`, { reason: "RESULT_SCHEMA" });
  }
  const result = parsed.data;
  for (const field of ["taskId", "repository", "baseSha"] as const) {
    if (result[field] !== request[field]) throw new AppError("CONTRACT_VIOLATION", `result.json names ${field} ${JSON.stringify(result[field]).slice(0, 100)}, the request was for ${request[field]}`, { reason: "RESULT_DISAGREES" });
  }
  return result;
}
