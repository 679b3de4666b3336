/**
 * `PUT /api/operator/agent-code` (body: a tar or tar.gz, `Content-Type: application/octet-stream`):
 * the operator page's upload of an agent's code, up to the CLI's limit (16 MiB) — a route of its
 * own so Next's server-action body limit (1 MB, for every action) stays where it is. The role is
 * checked before the body is read; the use case reads it capped, validates and stores it, and
 * answers what the add/edit forms send back: `{ codeDigest, bytes, dependencies }`.
 * proxy.ts does not run for this path: Next would buffer (and cut at 10 MB) a body for the proxy
 * before any check of ours.
 */
import { withActorRoute } from "@/app/_server/route";
import { uploadAgentCode } from "@/lib/agents/upload-agent-code";
import type { TAgentCodeUploadAnswer } from "@/lib/contract/agent-code-upload";
import { getDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { AppError } from "@/lib/errors";

export const PUT = withActorRoute({
  action: "agent.manage",
  handler: async ({ request }) => {
    const contentType = request.headers.get("content-type")?.split(";")[0]?.trim().toLowerCase();
    if (contentType !== "application/octet-stream")
      throw new AppError("VALIDATION_FAILED", "Send the archive's bytes as application/octet-stream.");
    const stored = await uploadAgentCode(
      { db: await getDb(), dataDir: getEnv().dataDir },
      { body: request.body, contentLength: request.headers.get("content-length") },
    );
    const answer: TAgentCodeUploadAnswer = {
      codeDigest: stored.digest,
      bytes: stored.bytes,
      dependencies: stored.dependencies,
    };
    return Response.json(answer, { headers: { "cache-control": "no-store" } });
  },
});
