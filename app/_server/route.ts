import "server-only";
import type { z } from "zod";
import { actorRoute, type RouteOptions } from "./actor-route";
import { getActor } from "./actor";

export { errorResponse } from "./actor-route";

/**
 * The one wrapper for session-authenticated route handlers: actor, permission, parse, error
 * mapping. With a schema it parses the query (GET) or a JSON body; without one it reads nothing,
 * and the handler gets the request with its body unread, only after the permission check — a raw
 * body (an upload) is then read by its use case, under that use case's cap.
 */
export function withActorRoute<S extends z.ZodType, P = Record<string, string>>(options: RouteOptions<S, P>) {
  return actorRoute(getActor, options);
}
