import { withActorRoute } from "@/app/_server/route";
import { getDb } from "@/lib/db/client";
import { exportResults, ZExportResultsSchema } from "@/lib/attempts/export-results";

// The results export (issue 26): one row per task, filtered by repository and creation day.
export const GET = withActorRoute({
  action: "review.view",
  schema: ZExportResultsSchema,
  handler: async ({ body }) => {
    const { csv } = await exportResults({ db: await getDb() }, body);
    return new Response(csv, {
      headers: {
        "content-type": "text/csv; charset=utf-8",
        "content-disposition": `attachment; filename="results${body.repository ? `-${body.repository.replace(/[^a-z0-9._-]/gi, "_")}` : ""}.csv"`,
        "cache-control": "no-store",
      },
    });
  },
});
