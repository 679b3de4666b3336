/**
 * Who may do what: one table, one check. Every page, action and route handler calls `can`. Who the
 * actor is (`Actor`, the roles) is lib/contract/actor.ts.
 */
import { ACTIONS, type TAction } from "../contract/actions";
import { ZRoleSchema, type Actor, type TRole } from "../contract/actor";

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
