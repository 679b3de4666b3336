/**
 * An agent's code uploaded as a request body (the operator page's PUT /api/operator/agent-code):
 * the same limit as the CLI's (AGENT_CODE_LIMITS.maxArchiveBytes, 16 MiB), without raising Next's
 * server-action body limit for every action. The caller has checked the role before the body is
 * touched. A declared Content-Length over the limit is refused before a byte is read; a body that
 * passes it while streaming is refused at that chunk, the rest never pulled (a missing or false
 * Content-Length changes nothing). Then the bytes go through storeAgentCode: validated like a
 * candidate archive, stored content-addressed, nothing stored when refused.
 */
import type { Db } from "../db/client";
import { AppError } from "../errors";
import { formatBytes } from "../format/format";
import { readWebBodyCapped } from "../http/read-body-capped";
import { AGENT_CODE_LIMITS, storeAgentCode, type TStoredAgentCode } from "./store-agent-code";

function tooLarge(what: string): AppError {
  const limit = AGENT_CODE_LIMITS.maxArchiveBytes;
  return new AppError(
    "ARCHIVE_TOO_LARGE",
    `The archive is larger than ${formatBytes(limit)} (${limit} bytes): ${what}.`,
    {
      limitBytes: limit,
    },
  );
}

export async function uploadAgentCode(
  deps: { db: Db; dataDir: string },
  input: { body: ReadableStream<Uint8Array> | null; contentLength: string | null },
): Promise<TStoredAgentCode> {
  const limit = AGENT_CODE_LIMITS.maxArchiveBytes;
  if (input.contentLength !== null) {
    const declared = /^\d{1,16}$/.test(input.contentLength) ? Number(input.contentLength) : Number.NaN;
    if (Number.isNaN(declared))
      throw new AppError("VALIDATION_FAILED", "The request's Content-Length is not a number of bytes.");
    if (declared > limit) throw tooLarge(`its Content-Length says ${declared} bytes`);
  }
  const bytes = input.body ? await readWebBodyCapped(input.body, limit) : Buffer.alloc(0);
  if (bytes === "too_large") throw tooLarge("refused while it was being sent");
  if (bytes.length === 0) throw new AppError("VALIDATION_FAILED", "The request carries no archive (an empty body).");
  return storeAgentCode(deps, { kind: "upload", bytes });
}
