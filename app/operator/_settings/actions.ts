"use server";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { withActorAction } from "@/app/_server/action";
import { summaryOf } from "@/app/_server/field-errors";
import { can } from "@/lib/auth/permissions";
import type { TAction } from "@/lib/contract/actions";
import { ZAuditReasonSchema } from "@/lib/contract/audit-reason";
import { getDb } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { readSettingVersion, settingFieldErrors, writeSetting } from "@/lib/settings/operator-settings";
import { SETTING_SCHEMAS } from "@/lib/settings/setting-schemas";
import { FORM_SETTING_KEYS, formFieldErrorsOf, settingValueOf, type TFormSettingKey } from "./setting-form-model";

const PERMISSION_OF: Record<TFormSettingKey, TAction> = {
  "task.limits": "limits.edit",
  "guest.image": "limits.edit",
  "verifier.image": "limits.edit",
  "guest.agent": "limits.edit",
  "task.overrideMaxima": "limits.edit",
  "task.retry": "limits.edit",
  "review.rounds": "limits.edit",
  "machines.concurrency": "limits.edit",
  "review.separationOfDuties": "limits.edit",
  "review.anonymous": "limits.edit",
  "probe.externalTargets": "probe.run",
  "spend.ceilings": "spend.edit",
  "spend.rates": "spend.edit",
  "relay.upstream": "relay.manage",
  "relay.pricing": "relay.manage",
  "publish.github": "publish.manage",
  "auth.oidc": "user.manage",
};

const PAGE_OF: Record<TFormSettingKey, string> = {
  "task.limits": "/operator/limits",
  "guest.image": "/operator/limits",
  "verifier.image": "/operator/limits",
  "guest.agent": "/operator/limits",
  "task.overrideMaxima": "/operator/limits",
  "task.retry": "/operator/limits",
  "review.rounds": "/operator/limits",
  "machines.concurrency": "/operator/limits",
  "review.separationOfDuties": "/operator/limits",
  "review.anonymous": "/operator/limits",
  "probe.externalTargets": "/operator/probes",
  "auth.oidc": "/operator/users",
  "spend.ceilings": "/operator/spend",
  "spend.rates": "/operator/spend",
  "relay.upstream": "/operator/relay",
  "relay.pricing": "/operator/relay",
  "publish.github": "/operator/publication",
};

/**
 * Saves one typed setting form. Every problem comes back at once, next to its field: the value's
 * issues from the registry's schema and a missing reason. Nothing is written unless all pass.
 */
export const saveSettingFormAction = withActorAction({
  action: "operator.view",
  schema: z.looseObject({
    key: z.enum(FORM_SETTING_KEYS as [TFormSettingKey, ...TFormSettingKey[]]),
    reason: z.string().max(2000).optional(),
  }),
  handler: async ({ actor, input }) => {
    // A caller without this setting's permission learns nothing more than a missing page would say.
    if (!can(actor, PERMISSION_OF[input.key])) throw new AppError("NOT_FOUND", "Not found.");
    const value = settingValueOf(input.key, input as Record<string, unknown>);
    const parsed = SETTING_SCHEMAS[input.key].schema.safeParse(value);
    const reason = ZAuditReasonSchema.safeParse(input.reason);
    const fieldErrors = {
      ...(parsed.success ? {} : formFieldErrorsOf(input.key, settingFieldErrors(parsed.error.issues))),
      ...(reason.success ? {} : { reason: reason.error.issues.map((issue) => issue.message) }),
    };
    if (!parsed.success || !reason.success) return { ok: false, error: `Nothing saved. ${summaryOf(fieldErrors)}`, fieldErrors };
    const db = await getDb();
    await writeSetting(db, { key: input.key, value, actorId: actor.userId, reason: reason.data, via: "web" });
    const version = await readSettingVersion(db, input.key);
    revalidatePath(PAGE_OF[input.key]);
    return { ok: true, message: `${SETTING_SCHEMAS[input.key].label} saved as version ${version}.` };
  },
});
