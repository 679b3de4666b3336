/**
 * Who may do what: one table, one check. Every page, action and route handler calls `can`.
 */
import { z } from "zod";
import { ACTIONS, type TAction } from "../contract/actions";

export const ZRoleSchema = z.enum(["teacher", "operator"]);
export type TRole = z.infer<typeof ZRoleSchema>;

/**
 * The one actor reference type (issue 28, item 7): how a signed-in user is passed into lib — to a
 * page's read…Page, an action's use case, a decision. The session wrapper (app/_server/actor.ts)
 * and the CLI build it; lib never takes a bare user id or a partial user in its place. Where a use
 * case also runs without a user (the worker, the CLI), it takes `Actor | null` (null = the system)
 * and stores `actorIdOf(actor)` in the audit row.
 */
export type Actor = { userId: string; email: string; roles: readonly TRole[] };

/** The audit trail's actor column: the user's id, null for the system. */
export function actorIdOf(actor: Actor | null): string | null {
  return actor?.userId ?? null;
}

const OPERATOR_ACTIONS = ACTIONS.filter((a) => !a.startsWith("review."));

export const ROLE_PERMISSIONS = {
  teacher: ["review.view", "review.decide", "profile.edit"],
  operator: OPERATOR_ACTIONS,
} as const satisfies Record<TRole, readonly TAction[]>;

/** Fails closed: an unknown role grants nothing. */
export function can(actor: Actor | null | undefined, action: TAction): boolean {
  if (!actor) return false;
  return actor.roles.some(
    (role) => (ROLE_PERMISSIONS[role] as readonly TAction[] | undefined)?.includes(action) ?? false,
  );
}

/** Parses a roles value from an untrusted place (a JWT, a CLI flag); unknown values are dropped. */
export function parseRoles(value: unknown): TRole[] {
  if (!Array.isArray(value)) return [];
  return value.flatMap((v) => {
    const parsed = ZRoleSchema.safeParse(v);
    return parsed.success ? [parsed.data] : [];
  });
}
