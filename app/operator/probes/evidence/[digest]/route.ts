/**
 * Download of one probe run's evidence document (operators only; anyone else gets NOT_FOUND).
 * The bytes are read back from the content-addressed store, verified against their digest.
 */
import { withActorRoute } from "@/app/_server/route";
import { getDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { AppError } from "@/lib/errors";
import { readEvidence } from "@/lib/probes/probe-evidence";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

export const GET = withActorRoute<never, { digest: string }>({
  action: "probe.run",
  handler: async ({ params }) => {
    if (!/^[0-9a-f]{64}$/.test(params.digest)) throw new AppError("NOT_FOUND", "Not found.");
    const bytes = await readEvidence({ db: await getDb(), env: getEnv() }, params.digest);
    return new Response(new Uint8Array(bytes), {
      headers: {
        "content-type": "application/json",
        "content-disposition": `attachment; filename="probe-evidence-${params.digest.slice(0, 12)}.json"`,
        "cache-control": "no-store",
        "x-content-sha256": params.digest,
      },
    });
  },
});
