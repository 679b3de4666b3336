import "server-only";
import { getServerSession } from "next-auth";
import { cache } from "react";
import type { Actor } from "@/lib/auth/permissions";
import { parseRoles } from "@/lib/auth/permissions";
import { getDb } from "@/lib/db/client";
import { getAuthOptions } from "./auth-options";

/**
 * The signed-in actor, or null. Roles come from the database on every request (not only from
 * the JWT), so a removed role or a disabled user loses access at once; unknown = no access.
 */
export const getActor = cache(readActor);

// Memoised per request (React `cache`): the layout and the page both ask, one lookup answers.
async function readActor(): Promise<Actor | null> {
  const session = await getServerSession(getAuthOptions());
  const userId = (session?.user as { id?: unknown } | undefined)?.id;
  if (typeof userId !== "string") return null;
  const db = await getDb();
  const user = await db.user.findUnique({ where: { id: userId }, select: { id: true, email: true, roles: true, isDisabled: true } });
  if (!user || user.isDisabled) return null;
  return { userId: user.id, email: user.email, roles: parseRoles(user.roles) };
}
