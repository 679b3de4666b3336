/**
 * The agent-code upload route's boundary (PUT /api/operator/agent-code, issue 26): what it answers
 * after an archive was checked and stored, read by the operator page's upload control. Here, in
 * the foundation, so the client component reads it without importing a use case (and its database).
 */
import { z } from "zod";

export const AGENT_CODE_UPLOAD_PATH = "/api/operator/agent-code";

/** An agent's code archive, at most (AGENT_CODE_LIMITS.maxArchiveBytes): the CLI's and the page's alike. */
export const AGENT_CODE_MAX_ARCHIVE_BYTES = 16 * 1024 * 1024;

export const ZAgentCodeUploadAnswerSchema = z
  .object({
    codeDigest: z.string().regex(/^[0-9a-f]{64}$/),
    bytes: z.number().int().nonnegative(),
    /** the recipe the code's lockfile selects; null = no lockfile */
    dependencies: z.object({ recipe: z.string().max(64), lockfileDigest: z.string().max(128) }).nullable(),
  })
  .strict();
export type TAgentCodeUploadAnswer = z.infer<typeof ZAgentCodeUploadAnswerSchema>;
