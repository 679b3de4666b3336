/**
 * The outbox's sender, run by the worker every few seconds: claims due deliveries (a lease, with
 * SKIP LOCKED so two workers never send the same row at once), sends each by email or signed
 * webhook, and records the attempt — sent, or failed with its error and the next attempt after
 * backoff, or failed for good after the last one. Delivery is at least once: a sender that dies
 * between sending and recording lets the lease lapse and the row is sent again (webhook receivers
 * de-duplicate on X-School-Core-Delivery).
 */
import type { Db } from "../db/client";
import type { NotificationDelivery } from "../db/generated/client";
import { publicAppUrl, type TEnv } from "../env";
import { parseRoles } from "../auth/permissions";
import { assertSecureEndpoint } from "../contract/secure-endpoint";
import { sanitizeExcerpt } from "../redact";
import { nextDeliveryAttemptAt } from "./delivery-backoff";
import { isTaskNotificationEvent, notificationPathFor } from "./notification-events";
import { renderNotificationEmail, renderWebhookBody } from "./render-notification";
import type { TMailer } from "./smtp-mailer";
import { readWebhookSecret } from "./webhook-secret";
import {
  DELIVERY_HEADER,
  EVENT_HEADER,
  SIGNATURE_HEADER,
  TIMESTAMP_HEADER,
  signWebhookBody,
} from "./webhook-signature";

/** Longer than one attempt can take (SMTP and webhook timeouts), so a live sender keeps its rows. */
const LEASE_MS = 120_000;
const WEBHOOK_TIMEOUT_MS = 10_000;
export const MAX_DELIVERY_ERROR_BYTES = 500;

export type TSendDeps = { db: Db; env: TEnv; mailer: TMailer | null; now?: () => Date };
export type TSendSummary = { sent: number; retrying: number; failed: number };

/** A failure that no retry can fix (the recipient went away): the delivery fails at once. */
class PermanentDeliveryError extends Error {}

export async function sendDueNotifications(deps: TSendDeps, input: { take?: number } = {}): Promise<TSendSummary> {
  const now = deps.now?.() ?? new Date();
  const take = Math.min(input.take ?? 20, 100);
  const leaseUntil = new Date(now.getTime() + LEASE_MS);
  const claimed = await deps.db.$queryRaw<{ id: string }[]>`
    UPDATE "NotificationDelivery" SET "leaseUntil" = ${leaseUntil}
    WHERE id IN (
      SELECT id FROM "NotificationDelivery"
      WHERE status = 'pending' AND "nextAttemptAt" <= ${now} AND ("leaseUntil" IS NULL OR "leaseUntil" < ${now})
      ORDER BY "nextAttemptAt" LIMIT ${take}
      FOR UPDATE SKIP LOCKED)
    RETURNING id`;
  const summary: TSendSummary = { sent: 0, retrying: 0, failed: 0 };
  for (const { id } of claimed) {
    const outcome = await attemptDelivery(deps, id, leaseUntil);
    summary[outcome] += 1;
  }
  return summary;
}

async function attemptDelivery(deps: TSendDeps, id: string, leaseUntil: Date): Promise<keyof TSendSummary> {
  const delivery = await deps.db.notificationDelivery.findUniqueOrThrow({ where: { id } });
  let error: unknown = null;
  try {
    if (delivery.channel === "email") await sendEmail(deps, delivery);
    else await postWebhook(deps, delivery);
  } catch (caught) {
    error = caught;
  }
  const finishedAt = deps.now?.() ?? new Date();
  const attempts = delivery.attempts + 1;
  // Only the holder of this lease records the attempt (a sender whose lease lapsed mid-send does not).
  const mine = { id, status: "pending" as const, leaseUntil };
  if (error === null) {
    await deps.db.notificationDelivery.updateMany({
      where: mine,
      data: { status: "sent", attempts, sentAt: finishedAt, lastError: null, nextAttemptAt: null, leaseUntil: null },
    });
    return "sent";
  }
  const next = error instanceof PermanentDeliveryError ? null : nextDeliveryAttemptAt(attempts, finishedAt);
  const message = error instanceof Error ? error.message : String(error);
  await deps.db.notificationDelivery.updateMany({
    where: mine,
    data: {
      status: next ? "pending" : "failed",
      attempts,
      nextAttemptAt: next,
      leaseUntil: null,
      lastError: sanitizeExcerpt(message, MAX_DELIVERY_ERROR_BYTES),
    },
  });
  return next ? "retrying" : "failed";
}

async function taskFactsOf(db: Db, delivery: NotificationDelivery) {
  if (!delivery.taskId) return null;
  const task = await db.task.findUnique({
    where: { id: delivery.taskId },
    select: {
      id: true,
      issueNumber: true,
      issueTitle: true,
      round: true,
      errorCode: true,
      repository: { select: { name: true } },
    },
  });
  if (!task) throw new PermanentDeliveryError("The task no longer exists.");
  const round = delivery.round ?? task.round;
  const candidate = await db.candidate.findUnique({
    where: { taskId_round: { taskId: task.id, round } },
    select: { id: true },
  });
  return {
    id: task.id,
    candidateId: candidate?.id ?? null,
    repository: task.repository.name,
    issueNumber: task.issueNumber,
    issueTitle: task.issueTitle,
    round,
    errorCode: task.errorCode,
  };
}

async function sendEmail(deps: TSendDeps, delivery: NotificationDelivery) {
  if (!isTaskNotificationEvent(delivery.event) || !delivery.userId)
    throw new PermanentDeliveryError("Not an email notification.");
  const user = await deps.db.user.findUnique({
    where: { id: delivery.userId },
    select: { id: true, email: true, roles: true, isDisabled: true },
  });
  if (!user || user.isDisabled) throw new PermanentDeliveryError("The recipient is disabled or gone.");
  const task = await taskFactsOf(deps.db, delivery);
  if (!task) throw new PermanentDeliveryError("The notification names no task.");
  // Read again at send time: a recipient who lost the role since the event gets no link to it.
  const path = notificationPathFor(
    { userId: user.id, email: user.email, roles: parseRoles(user.roles) },
    { event: delivery.event, taskId: task.id, candidateId: task.candidateId },
  );
  if (!path) throw new PermanentDeliveryError("The recipient may no longer see this task.");
  if (!deps.mailer) throw new Error("Email is not configured: SMTP_URL is not set.");
  const base = publicAppUrl(deps.env);
  const message = renderNotificationEmail({
    event: delivery.event,
    task,
    link: `${base}${path}`,
    profileLink: `${base}/profile`,
  });
  await deps.mailer.sendMail({ to: user.email, ...message });
}

async function postWebhook(deps: TSendDeps, delivery: NotificationDelivery) {
  const hook = delivery.webhookId
    ? await deps.db.notificationWebhook.findUnique({
        where: { id: delivery.webhookId },
        select: { id: true, url: true, removedAt: true },
      })
    : null;
  if (!hook || hook.removedAt) throw new PermanentDeliveryError("The webhook was removed.");
  // Checked again on every use: a row written before the rule, or edited in the database, fails closed.
  assertSecureEndpoint(hook.url, "webhook URL");
  const base = publicAppUrl(deps.env);
  const url = delivery.taskId ? `${base}/operator/tasks/${delivery.taskId}` : `${base}/profile`;
  const body = renderWebhookBody({
    event: delivery.event,
    taskId: delivery.taskId,
    url,
    occurredAt: delivery.occurredAt,
  });
  const secret = await readWebhookSecret(deps.env, hook.id);
  // The wall clock, not deps.now: the receiver judges freshness by its own clock.
  const timestamp = Math.floor(Date.now() / 1000);
  const response = await fetch(hook.url, {
    method: "POST",
    body,
    redirect: "manual",
    signal: AbortSignal.timeout(WEBHOOK_TIMEOUT_MS),
    headers: {
      "content-type": "application/json",
      "user-agent": "School-Core-Webhook/1",
      [TIMESTAMP_HEADER]: String(timestamp),
      [SIGNATURE_HEADER]: signWebhookBody({ secret, timestamp, body }),
      [DELIVERY_HEADER]: delivery.id,
      [EVENT_HEADER]: delivery.event,
    },
  }).catch((error: unknown) => {
    const cause = (error as { cause?: { code?: unknown } }).cause?.code;
    throw new Error(
      `Could not reach the receiver: ${typeof cause === "string" ? cause : error instanceof Error ? error.message : "error"}.`,
    );
  });
  // Only the status matters; the receiver's body is never read into memory or the log.
  await response.body?.cancel().catch(() => undefined);
  if (response.status < 200 || response.status > 299) throw new Error(`The receiver answered HTTP ${response.status}.`);
}
