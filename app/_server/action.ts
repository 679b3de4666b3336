import "server-only";
import type { z } from "zod";
import { can, type Actor, type TAction } from "@/lib/auth/permissions";
import { isAppError, userMessageOf } from "@/lib/errors";
import { logError } from "@/lib/log";
import { getActor } from "./actor";

export type ActionResult = { ok: true; message: string; id?: string } | { ok: false; error: string };

/**
 * The one wrapper for server actions: session → actor, permission, zod parse of the form, one use
 * case, typed errors → a bounded message. A caller without the permission learns nothing more.
 */
export function withActorAction<S extends z.ZodType>(options: { action: TAction; schema: S; handler: (input: { actor: Actor; input: z.infer<S> }) => Promise<ActionResult> }) {
  return async (_previous: ActionResult | null, formData: FormData): Promise<ActionResult> => {
    try {
      const actor = await getActor();
      if (!actor || !can(actor, options.action)) return { ok: false, error: "Not found." };
      const raw = Object.fromEntries([...formData.entries()].filter(([key]) => !key.startsWith("$ACTION")));
      const parsed = options.schema.safeParse(raw);
      if (!parsed.success) {
        const issue = parsed.error.issues[0]!;
        return { ok: false, error: `${issue.path.join(".") || "input"}: ${issue.message}` };
      }
      return await options.handler({ actor, input: parsed.data });
    } catch (error) {
      if (isAppError(error)) return { ok: false, error: error.message };
      logError("server action failed", error);
      return { ok: false, error: userMessageOf(error) };
    }
  };
}
