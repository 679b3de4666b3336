"use server";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { withActorAction } from "@/app/_server/action";
import { summaryOf } from "@/app/_server/field-errors";
import { can } from "@/lib/auth/permissions";
import { ZAuditReasonSchema } from "@/lib/contract/audit-reason";
import { getDb } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { readSettingVersion, settingFieldErrors, writeSetting } from "@/lib/settings/operator-settings";
import { formFieldErrorsOf, settingValueOf } from "@/lib/settings/setting-form-model";
import { FORM_SETTING_KEYS, formOf, SETTING_DEFINITIONS, type TFormSettingKey } from "@/lib/settings/setting-registry";

/**
 * Saves one typed setting form. Every problem comes back at once, next to its field: the value's
 * issues from the registry's schema and a missing reason. Nothing is written unless all pass.
 * The permission and the page to refresh are the setting's own (its definition).
 */
export const saveSettingFormAction = withActorAction({
  action: "operator.view",
  schema: z.looseObject({
    key: z.enum(FORM_SETTING_KEYS as [TFormSettingKey, ...TFormSettingKey[]]),
    reason: z.string().max(2000).optional(),
  }),
  handler: async ({ actor, input }) => {
    const definition = SETTING_DEFINITIONS[input.key];
    // A caller without this setting's permission learns nothing more than a missing page would say.
    if (!can(actor, definition.permission)) throw new AppError("NOT_FOUND", "Not found.");
    const form = formOf(input.key);
    const value = settingValueOf(form, input as Record<string, unknown>);
    const parsed = definition.schema.safeParse(value);
    const reason = ZAuditReasonSchema.safeParse(input.reason);
    const fieldErrors = {
      ...(parsed.success ? {} : formFieldErrorsOf(form, settingFieldErrors(parsed.error.issues))),
      ...(reason.success ? {} : { reason: reason.error.issues.map((issue) => issue.message) }),
    };
    if (!parsed.success || !reason.success)
      return { ok: false, error: `Nothing saved. ${summaryOf(fieldErrors)}`, fieldErrors };
    const db = await getDb();
    await writeSetting({ db }, { key: input.key, value, actor, reason: reason.data, via: "web" });
    const version = await readSettingVersion({ db }, { key: input.key });
    revalidatePath(definition.page);
    return { ok: true, message: `${definition.label} saved as version ${version}.` };
  },
});
