/**
 * The relay's HTTP channel. No session: the bearer handle is the capability. Thin — parse, call
 * one use case, map — and it never echoes the handle.
 */
import { getDb } from "@/lib/db/client";
import { userMessageOf } from "@/lib/errors";
import { logError } from "@/lib/log";
import { handleRelayHttpRequest } from "@/lib/relay/relay-http";

export const dynamic = "force-dynamic";
export const runtime = "nodejs";

const NO_STORE = { "cache-control": "no-store" };

export async function POST(request: Request, context: { params: Promise<{ operation: string }> }): Promise<Response> {
  try {
    const { operation } = await context.params;
    const result = await handleRelayHttpRequest({ db: await getDb(), operation, request });
    return Response.json(result.body, { status: result.status, headers: NO_STORE });
  } catch (error) {
    logError("relay route failed", error);
    return Response.json({ error: { code: "INTERNAL", message: userMessageOf(error) } }, { status: 500, headers: NO_STORE });
  }
}
