"use server";
import { revalidatePath } from "next/cache";
import { withActorAction } from "@/app/_server/action";
import { getDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import {
  addWebhook,
  removeWebhook,
  sendWebhookTest,
  ZAddWebhookSchema,
  ZSetEmailPreferencesSchema,
  ZWebhookIdSchema,
  setEmailPreferences,
} from "@/lib/notifications/manage-notifications";

export const saveEmailPreferencesAction = withActorAction({
  action: "profile.edit",
  schema: ZSetEmailPreferencesSchema,
  handler: async ({ actor, input }) => {
    const events = await setEmailPreferences({ db: await getDb() }, { actor, events: input.events });
    revalidatePath("/profile");
    return {
      ok: true,
      message: events.length === 0 ? "Saved: no email." : `Saved: email on ${events.length} event(s).`,
    };
  },
});

// The signing secret travels once, in the action's answer; it is never stored in the page or the database.
export const addWebhookAction = withActorAction({
  action: "notification.manage",
  schema: ZAddWebhookSchema,
  handler: async ({ actor, input }) => {
    const { webhook, secret } = await addWebhook(
      { db: await getDb(), env: getEnv() },
      { actor, url: input.url, events: input.events },
    );
    revalidatePath("/profile");
    return {
      ok: true,
      id: webhook.id,
      message: `Webhook added. Its signing secret (shown once, copy it now): ${secret}`,
    };
  },
});

export const removeWebhookAction = withActorAction({
  action: "notification.manage",
  schema: ZWebhookIdSchema,
  handler: async ({ actor, input }) => {
    const hook = await removeWebhook({ db: await getDb(), env: getEnv() }, { actor, webhookId: input.webhookId });
    revalidatePath("/profile");
    return { ok: true, message: `Removed ${hook.url}.` };
  },
});

export const testWebhookAction = withActorAction({
  action: "notification.manage",
  schema: ZWebhookIdSchema,
  handler: async ({ actor, input }) => {
    await sendWebhookTest({ db: await getDb() }, { actor, webhookId: input.webhookId });
    revalidatePath("/profile");
    return { ok: true, message: "Test queued: it is sent within seconds; see the delivery log." };
  },
});
