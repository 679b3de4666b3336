import "server-only";
import { headers } from "next/headers";
import { forbidden, redirect } from "next/navigation";
import { can } from "@/lib/auth/permissions";
import type { Actor } from "@/lib/contract/actor";
import type { TAction } from "@/lib/contract/actions";
import { getActor } from "./actor";

/**
 * For pages: anonymous → sign-in with a return URL; signed in without the permission → the 403
 * page with HTTP status 403. Returns the actor for the page to use.
 */
export async function requirePagePermission(action: TAction, returnPath: string): Promise<Actor> {
  const actor = await getActor();
  if (!actor) redirect(`/signin?callbackUrl=${encodeURIComponent(returnPath)}`);
  if (!can(actor, action)) forbidden();
  return actor;
}

export async function getNonce(): Promise<string | undefined> {
  return (await headers()).get("x-nonce") ?? undefined;
}
