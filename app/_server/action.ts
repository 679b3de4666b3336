import "server-only";
import { z } from "zod";
import { can } from "@/lib/auth/permissions";
import type { Actor } from "@/lib/contract/actor";
import type { TAction } from "@/lib/contract/actions";
import { isAppError, userMessageOf } from "@/lib/errors";
import { logError } from "@/lib/log";
import { getActor } from "./actor";
import { fieldErrorsOf, summaryOf, type TFieldErrors } from "./field-errors";
import { formDataToObject } from "./form-input";

export type { TFieldErrors } from "./field-errors";

/**
 * What every server action answers. A failure carries a bounded summary (`error`) and, when the
 * input broke its schema, every issue keyed by field path (`fieldErrors`) for `<FieldError>`.
 */
export type ActionResult =
  { ok: true; message: string; id?: string } | { ok: false; error: string; fieldErrors?: TFieldErrors };

// A use case may refuse its input field by field: a typed error (VALIDATION_FAILED, CREDENTIAL_FILE_REFUSED …) with `details.fieldErrors`.
const ZFieldErrorsDetailSchema = z.object({ fieldErrors: z.record(z.string(), z.array(z.string()).max(20)) });

/**
 * The one wrapper for server actions: session → actor, permission, zod parse of the form, one use
 * case, typed errors → a bounded message. A caller without the permission learns nothing more.
 */
export function withActorAction<S extends z.ZodType>(options: {
  action: TAction;
  schema: S;
  handler: (input: { actor: Actor; input: z.infer<S> }) => Promise<ActionResult>;
}) {
  return async (_previous: ActionResult | null, formData: FormData): Promise<ActionResult> => {
    try {
      const actor = await getActor();
      if (!actor || !can(actor, options.action)) return { ok: false, error: "Not found." };
      const parsed = options.schema.safeParse(formDataToObject(formData));
      if (!parsed.success) {
        const fieldErrors = fieldErrorsOf(parsed.error.issues);
        return { ok: false, error: summaryOf(fieldErrors), fieldErrors };
      }
      return await options.handler({ actor, input: parsed.data });
    } catch (error) {
      if (isAppError(error)) {
        const detail = ZFieldErrorsDetailSchema.safeParse(error.details);
        return detail.success
          ? { ok: false, error: error.message, fieldErrors: detail.data.fieldErrors }
          : { ok: false, error: error.message };
      }
      logError("server action failed", error);
      return { ok: false, error: userMessageOf(error) };
    }
  };
}
