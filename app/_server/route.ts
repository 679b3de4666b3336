import "server-only";
import { NextResponse } from "next/server";
import type { z } from "zod";
import { can, type Actor } from "@/lib/auth/permissions";
import type { TAction } from "@/lib/contract/actions";
import { AppError, isAppError, userMessageOf } from "@/lib/errors";
import { logError } from "@/lib/log";
import { parseOrThrow } from "@/lib/parse-or-throw";
import { getActor } from "./actor";

export function errorResponse(error: unknown): NextResponse {
  if (isAppError(error)) {
    return NextResponse.json({ error: { code: error.code, message: error.message } }, { status: error.httpStatus });
  }
  logError("route handler failed", error);
  return NextResponse.json({ error: { code: "INTERNAL", message: userMessageOf(error) } }, { status: 500 });
}

type RouteOptions<S extends z.ZodType, P> = {
  action: TAction;
  schema?: S;
  handler: (input: { actor: Actor; body: z.infer<S>; params: P; request: Request }) => Promise<unknown>;
};

/** The one wrapper for session-authenticated JSON route handlers: actor, permission, parse, error mapping. */
export function withActorRoute<S extends z.ZodType, P = Record<string, string>>(options: RouteOptions<S, P>) {
  return async (request: Request, context: { params: Promise<P> }) => {
    try {
      const actor = await getActor();
      if (!actor) throw new AppError("UNAUTHENTICATED", "Sign in first.");
      if (!can(actor, options.action)) throw new AppError("NOT_FOUND", "Not found.");
      let body: unknown = undefined;
      if (options.schema) {
        const raw =
          request.method === "GET" ? Object.fromEntries(new URL(request.url).searchParams) : await request.json().catch(() => undefined);
        body = parseOrThrow(options.schema, raw, { code: "VALIDATION_FAILED", label: "request" });
      }
      const result = await options.handler({ actor, body: body as z.infer<S>, params: await context.params, request });
      return result instanceof Response ? result : NextResponse.json(result);
    } catch (error) {
      return errorResponse(error);
    }
  };
}
