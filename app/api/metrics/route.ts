/**
 * `GET /api/metrics`: the Prometheus exposition for the school's monitoring, behind the bearer
 * token in DATA_DIR/secrets/metrics-token (`schoolcore metrics token`). No session: a scraper is
 * not a user. Collection lives in lib/metrics.
 */
import { NextResponse } from "next/server";
import { getDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { collectMetrics } from "@/lib/metrics/collect-metrics";
import { isMetricsRequestAuthorized } from "@/lib/metrics/metrics-token";
import { substrateEndpoint } from "@/lib/substrate/substrate-endpoint";
import { errorResponse } from "@/app/_server/route";

export const dynamic = "force-dynamic";

export async function GET(request: Request) {
  try {
    if (!(await isMetricsRequestAuthorized(getEnv().dataDir, request.headers.get("authorization")))) {
      return NextResponse.json(
        { error: { code: "UNAUTHENTICATED", message: "A metrics bearer token is required." } },
        { status: 401, headers: { "WWW-Authenticate": 'Bearer realm="metrics"' } },
      );
    }
    const { contentType, body } = await collectMetrics({
      db: await getDb(),
      substrateLabel: substrateEndpoint(getEnv()).label,
    });
    return new Response(body, { status: 200, headers: { "Content-Type": contentType, "Cache-Control": "no-store" } });
  } catch (error) {
    return errorResponse(error);
  }
}
