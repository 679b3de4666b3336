/**
 * The one actor reference type (issue 28, item 7): how a signed-in user is passed into lib — to a
 * page's read…Page, an action's use case, a decision, a settings write. The session wrapper
 * (app/_server/actor.ts) and the CLI build it; lib never takes a bare user id or a partial user in
 * its place. Where a use case also runs without a user (the worker, the CLI), it takes
 * `Actor | null` (null = the system) and stores `actorIdOf(actor)` in the audit row. It lives in
 * the foundation layer so that every layer may take it, the settings store below lib/auth included;
 * what an actor may do is lib/auth/permissions.ts.
 */
import { z } from "zod";

export const ZRoleSchema = z.enum(["teacher", "operator"]);
export type TRole = z.infer<typeof ZRoleSchema>;

export type Actor = { userId: string; email: string; roles: readonly TRole[] };

/** The audit trail's actor column: the user's id, null for the system. */
export function actorIdOf(actor: Actor | null): string | null {
  return actor?.userId ?? null;
}
