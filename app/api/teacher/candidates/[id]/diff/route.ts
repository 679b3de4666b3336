/**
 * `GET /api/teacher/candidates/:id/diff?head=&left=&chunk=`: one chunk of the lines of the diff
 * the review page shows (the page sends the outline and chunk 0; DiffView fetches the rest, in
 * order). Same permission as the page; the use case binds the chunk to the candidate's head.
 */
import { withActorRoute } from "@/app/_server/route";
import { getDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { readCandidateDiffChunk, ZDiffChunkQuerySchema } from "@/lib/review/read-candidate-diff-chunk";

export const dynamic = "force-dynamic";

export const GET = withActorRoute<typeof ZDiffChunkQuerySchema, { id: string }>({
  action: "review.view",
  schema: ZDiffChunkQuerySchema,
  handler: async ({ body, params }) => {
    const chunk = await readCandidateDiffChunk(
      { db: await getDb(), dataDir: getEnv().dataDir },
      { candidateId: params.id, headSha: body.head, leftSha: body.left, index: body.chunk },
    );
    return Response.json(chunk, { headers: { "cache-control": "private, no-store" } });
  },
});
