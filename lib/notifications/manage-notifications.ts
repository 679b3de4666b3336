/**
 * The profile page's use cases: a user's email choices, and an operator's webhooks (add — the
 * secret is shown once —, remove, send a test). Every change to a webhook is audited; a user's
 * own email choices are their business and are not.
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import { can } from "../auth/permissions";
import type { Actor } from "../contract/actor";
import { assertSecureEndpoint } from "../contract/secure-endpoint";
import type { Db } from "../db/client";
import type { TEnv } from "../env";
import { AppError } from "../errors";
import { parseOrThrow } from "../parse-or-throw";
import { enqueueWebhookTest } from "./enqueue-notifications";
import { canReceiveNotification, TASK_NOTIFICATION_EVENTS } from "./notification-events";
import { createWebhookSecret, removeWebhookSecret } from "./webhook-secret";

const ZEventListSchema = z.preprocess(
  (v) => (v === undefined ? [] : Array.isArray(v) ? v : [v]),
  z.array(z.enum(TASK_NOTIFICATION_EVENTS)).max(TASK_NOTIFICATION_EVENTS.length),
);

export const ZSetEmailPreferencesSchema = z.object({ events: ZEventListSchema }).strict();

/** Replaces the actor's email choices; an event the actor's roles cannot receive is refused. */
export async function setEmailPreferences(deps: { db: Db }, input: { actor: Actor; events: unknown }) {
  const { events } = parseOrThrow(
    ZSetEmailPreferencesSchema,
    { events: input.events },
    { code: "VALIDATION_FAILED", label: "email choices" },
  );
  const chosen = [...new Set(events)];
  const refused = chosen.filter((event) => !canReceiveNotification(input.actor, event));
  if (refused.length > 0)
    throw new AppError("VALIDATION_FAILED", "Your roles cannot receive some of these notifications.", {
      fieldErrors: { events: [`not for your roles: ${refused.join(", ")}`] },
    });
  await deps.db.$transaction(async (tx) => {
    await tx.notificationPreference.deleteMany({ where: { userId: input.actor.userId } });
    await tx.notificationPreference.createMany({
      data: chosen.map((event) => ({ userId: input.actor.userId, event })),
    });
  });
  return chosen;
}

export async function listEmailPreferences(deps: { db: Db }, input: { actor: Actor }) {
  const rows = await deps.db.notificationPreference.findMany({
    where: { userId: input.actor.userId },
    select: { event: true },
  });
  return rows.map((r) => r.event);
}

export const MAX_WEBHOOKS = 20;

export const ZAddWebhookSchema = z
  .object({
    url: z
      .string()
      .trim()
      .max(2000)
      .url()
      // the URL shows on the page and in the log; a password in it would be shown to every operator
      .refine((v) => !new URL(v).username && !new URL(v).password, "must not contain a user name or password"),
    events: ZEventListSchema.pipe(z.array(z.enum(TASK_NOTIFICATION_EVENTS)).min(1, "choose at least one event")),
  })
  .strict();

/** Adds a webhook and returns its signing secret — the only time anyone sees it. */
export async function addWebhook(deps: { db: Db; env: TEnv }, input: { actor: Actor; url: unknown; events: unknown }) {
  if (!can(input.actor, "notification.manage")) throw new AppError("NOT_FOUND", "Not found.");
  const parsed = parseOrThrow(
    ZAddWebhookSchema,
    { url: input.url, events: input.events },
    { code: "VALIDATION_FAILED", label: "webhook" },
  );
  try {
    assertSecureEndpoint(parsed.url, "webhook URL");
  } catch (error) {
    if (error instanceof AppError)
      throw new AppError(error.code, error.message, { fieldErrors: { url: [error.message] } });
    throw error;
  }
  return deps.db.$transaction(async (tx) => {
    if ((await tx.notificationWebhook.count({ where: { removedAt: null } })) >= MAX_WEBHOOKS)
      throw new AppError("VALIDATION_FAILED", `At most ${MAX_WEBHOOKS} webhooks; remove one first.`);
    const hook = await tx.notificationWebhook.create({
      data: { url: parsed.url, events: [...new Set(parsed.events)], createdById: input.actor.userId },
    });
    await recordAudit(tx, {
      actorId: input.actor.userId,
      action: "webhook.add",
      targetType: "webhook",
      targetId: hook.id,
      detail: { url: hook.url, events: hook.events },
    });
    // Written before the commit: a failed write rolls the webhook back, so no webhook lacks its secret.
    const secret = await createWebhookSecret(deps.env, hook.id);
    return { webhook: hook, secret };
  });
}

const ZWebhookIdSchema = z.object({ webhookId: z.uuid() }).strict();
export { ZWebhookIdSchema };

async function getLiveWebhookOrThrow(db: Db, webhookId: string) {
  const hook = await db.notificationWebhook.findFirst({ where: { id: webhookId, removedAt: null } });
  if (!hook) throw new AppError("NOT_FOUND", "No such webhook.");
  return hook;
}

/** Removes a webhook: its secret file is deleted and its pending deliveries fail as "removed". */
export async function removeWebhook(deps: { db: Db; env: TEnv }, input: { actor: Actor; webhookId: string }) {
  if (!can(input.actor, "notification.manage")) throw new AppError("NOT_FOUND", "Not found.");
  const hook = await getLiveWebhookOrThrow(deps.db, input.webhookId);
  await deps.db.$transaction(async (tx) => {
    const removed = await tx.notificationWebhook.updateMany({
      where: { id: hook.id, removedAt: null },
      data: { removedAt: new Date() },
    });
    if (removed.count !== 1) throw new AppError("NOT_FOUND", "No such webhook.");
    await tx.notificationDelivery.updateMany({
      where: { webhookId: hook.id, status: "pending" },
      data: { status: "failed", lastError: "The webhook was removed.", nextAttemptAt: null },
    });
    await recordAudit(tx, {
      actorId: input.actor.userId,
      action: "webhook.remove",
      targetType: "webhook",
      targetId: hook.id,
      detail: { url: hook.url },
    });
  });
  await removeWebhookSecret(deps.env, hook.id);
  return hook;
}

/** Queues a signed test delivery to the webhook; the worker sends it within seconds and the log shows how it went. */
export async function sendWebhookTest(deps: { db: Db }, input: { actor: Actor; webhookId: string }) {
  if (!can(input.actor, "notification.manage")) throw new AppError("NOT_FOUND", "Not found.");
  const hook = await getLiveWebhookOrThrow(deps.db, input.webhookId);
  return enqueueWebhookTest(deps.db, { webhookId: hook.id, url: hook.url, now: new Date() });
}

export async function listWebhooks(deps: { db: Db }) {
  return deps.db.notificationWebhook.findMany({ where: { removedAt: null }, orderBy: { createdAt: "asc" } });
}

export const DELIVERY_LOG_SIZE = 50;

/** The delivery log: every delivery for an operator, the actor's own emails for anyone else. */
export async function listDeliveries(deps: { db: Db }, input: { actor: Actor; take?: number }) {
  const isOperator = can(input.actor, "notification.manage");
  return deps.db.notificationDelivery.findMany({
    where: isOperator ? {} : { userId: input.actor.userId },
    orderBy: { createdAt: "desc" },
    take: Math.min(input.take ?? DELIVERY_LOG_SIZE, 200),
    select: {
      id: true,
      event: true,
      channel: true,
      taskId: true,
      round: true,
      recipient: true,
      status: true,
      attempts: true,
      lastError: true,
      nextAttemptAt: true,
      sentAt: true,
      createdAt: true,
    },
  });
}
