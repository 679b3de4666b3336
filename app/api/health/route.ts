import { NextResponse } from "next/server";
import { readHealth } from "@/lib/health/read-health";

export const dynamic = "force-dynamic";

export async function GET() {
  const health = await readHealth();
  return NextResponse.json(health, {
    status: health.status === "down" ? 503 : 200,
    headers: { "Cache-Control": "no-store" },
  });
}
