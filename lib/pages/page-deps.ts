/**
 * What every page's reader is handed (issue 28, item 7): a page under app/ reads its whole view
 * model with one `read…Page(deps, input)` from lib/pages/, and renders. The deps are composed once
 * for all pages (app/_server/page-data.ts); the input names the signed-in actor and what the URL
 * asks for. Each reader checks the actor's permission itself — a page's guard redirects and
 * answers 403, the reader refuses with NOT_FOUND so that no other caller (the CLI, a test) can
 * read a view model its actor may not see.
 */
import { can } from "../auth/permissions";
import type { TAction } from "../contract/actions";
import type { Actor } from "../contract/actor";
import type { Db } from "../db/client";
import type { TEnv } from "../env";
import { AppError } from "../errors";

export type TPageDeps = { db: Db; env: TEnv };

/** A resource the caller may not see is NOT_FOUND, not FORBIDDEN (STYLE.md, Auth). */
export function assertMayRead(actor: Actor, action: TAction): void {
  if (!can(actor, action)) throw new AppError("NOT_FOUND", "Not found.");
}
