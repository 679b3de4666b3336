/**
 * A session (a next-auth JWT, signed but not stored) becomes an Actor only if the user still
 * exists, is enabled and the token's session epoch is the user's current one. Roles come from the
 * database on every request, so a removed role loses access at once; a password reset moves the
 * epoch on, so every token issued before it is refused (issue 27, item 4) — a JWT cannot be
 * revoked any other way. A token without an epoch (issued before sessions carried one) is refused:
 * fail closed, the user signs in again once.
 */
import type { Actor } from "../contract/actor";
import type { Db } from "../db/client";
import { parseRoles } from "./permissions";

export type TSessionClaims = { userId: unknown; sessionEpoch: unknown };

export async function resolveSessionActor(deps: { db: Db }, claims: TSessionClaims): Promise<Actor | null> {
  if (typeof claims.userId !== "string" || typeof claims.sessionEpoch !== "number") return null;
  if (!/^[0-9a-f-]{36}$/i.test(claims.userId)) return null;
  const user = await deps.db.user.findUnique({
    where: { id: claims.userId },
    select: { id: true, email: true, roles: true, isDisabled: true, sessionEpoch: true },
  });
  if (!user || user.isDisabled || user.sessionEpoch !== claims.sessionEpoch) return null;
  return { userId: user.id, email: user.email, roles: parseRoles(user.roles) };
}
