/**
 * The body of the one route wrapper (route.ts's withActorRoute), with the way of knowing the actor
 * given: the session's in every route, a fixed actor in the wrapper's own test. Not `server-only`
 * so that test can import it; it holds nothing secret.
 */
import { NextResponse } from "next/server";
import type { z } from "zod";
import { can } from "@/lib/auth/permissions";
import type { Actor } from "@/lib/contract/actor";
import type { TAction } from "@/lib/contract/actions";
import { AppError, isAppError, userMessageOf } from "@/lib/errors";
import { logError } from "@/lib/log";
import { parseOrThrow } from "@/lib/parse-or-throw";

export function errorResponse(error: unknown): NextResponse {
  if (isAppError(error)) {
    return NextResponse.json({ error: { code: error.code, message: error.message } }, { status: error.httpStatus });
  }
  logError("route handler failed", error);
  return NextResponse.json({ error: { code: "INTERNAL", message: userMessageOf(error) } }, { status: 500 });
}

export type RouteOptions<S extends z.ZodType, P> = {
  action: TAction;
  schema?: S;
  handler: (input: { actor: Actor; body: z.infer<S>; params: P; request: Request }) => Promise<unknown>;
};

const SAFE_METHODS = new Set(["GET", "HEAD"]);

/**
 * A request that changes something must come from our own pages: a browser sends Origin with every
 * PUT/POST/DELETE, and one naming another host is refused (what Next does for server actions).
 * No Origin is a client that is not a browser, which no other site can make send our cookie.
 */
function isCrossOrigin(request: Request): boolean {
  const origin = request.headers.get("origin");
  if (origin === null) return false;
  const host = request.headers.get("x-forwarded-host") ?? request.headers.get("host");
  try {
    return new URL(origin).host !== host;
  } catch {
    return true; // "null" (a sandboxed frame, a file:) or garbage: fail closed
  }
}

/** withActorRoute with the actor from `resolveActor`; see route.ts for the contract. */
export function actorRoute<S extends z.ZodType, P>(
  resolveActor: () => Promise<Actor | null>,
  options: RouteOptions<S, P>,
) {
  return async (request: Request, context: { params: Promise<P> }) => {
    try {
      const actor = await resolveActor();
      if (!actor) throw new AppError("UNAUTHENTICATED", "Sign in first.");
      if (!can(actor, options.action)) throw new AppError("NOT_FOUND", "Not found.");
      if (!SAFE_METHODS.has(request.method) && isCrossOrigin(request))
        throw new AppError("FORBIDDEN", "A request from another site is refused.");
      let body: unknown = undefined;
      if (options.schema) {
        const raw =
          request.method === "GET"
            ? Object.fromEntries(new URL(request.url).searchParams)
            : await request.json().catch(() => undefined);
        body = parseOrThrow(options.schema, raw, { code: "VALIDATION_FAILED", label: "request" });
      }
      const result = await options.handler({ actor, body: body as z.infer<S>, params: await context.params, request });
      return result instanceof Response ? result : NextResponse.json(result);
    } catch (error) {
      return errorResponse(error);
    }
  };
}
