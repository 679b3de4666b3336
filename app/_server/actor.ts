import "server-only";
import { getServerSession } from "next-auth";
import { cache } from "react";
import type { Actor } from "@/lib/contract/actor";
import { resolveSessionActor } from "@/lib/auth/resolve-session-actor";
import { getDb } from "@/lib/db/client";
import { getAuthOptions } from "./auth-options";

/**
 * The signed-in actor, or null. Roles come from the database on every request (not only from
 * the JWT), so a removed role or a disabled user loses access at once, and a token from before
 * the user's last password reset is refused (resolveSessionActor); unknown = no access.
 */
export const getActor = cache(readActor);

// Memoised per request (React `cache`): the layout and the page both ask, one lookup answers.
async function readActor(): Promise<Actor | null> {
  const session = await getServerSession(getAuthOptions());
  const claims = session?.user as { id?: unknown; sessionEpoch?: unknown } | undefined;
  if (!claims) return null;
  return resolveSessionActor({ db: await getDb() }, { userId: claims.id, sessionEpoch: claims.sessionEpoch });
}
