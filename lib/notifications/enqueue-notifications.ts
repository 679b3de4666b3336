/**
 * The outbox's writer. Called by the task transition kernel inside the transition's own
 * transaction, so an event is recorded exactly when the transition commits — never for a move
 * that rolled back, never lost to a crash after it. Writing rows is all it does: sending is the
 * worker's sender, later, so no mail server or webhook receiver can slow or fail a transition.
 */
import type { Db, DbTx } from "../db/client";
import type { NotificationEvent, TaskState } from "../db/generated/enums";
import { parseRoles } from "../auth/permissions";
import { canReceiveNotification, taskNotificationEventOf, type TTaskNotificationEvent } from "./notification-events";

type TTransitionFacts = {
  task: { id: string; round: number; probeRunId: string | null };
  from: TaskState;
  to: TaskState;
  occurredAt: Date;
};

/** Writes one delivery per subscribed user (email) and per subscribed webhook; returns how many. */
export async function enqueueTaskNotificationsIn(tx: DbTx, facts: TTransitionFacts): Promise<number> {
  const event = taskNotificationEventOf(facts.from, facts.to);
  // A qualification probe's throwaway tasks are the system testing itself, not news for anyone.
  if (!event || facts.task.probeRunId) return 0;
  const rows = [
    ...(await emailRecipientsOf(tx, event)).map((user) => ({
      channel: "email" as const,
      userId: user.id,
      recipient: user.email,
    })),
    ...(await webhooksFor(tx, event)).map((hook) => ({
      channel: "webhook" as const,
      webhookId: hook.id,
      recipient: hook.url,
    })),
  ];
  if (rows.length === 0) return 0;
  await tx.notificationDelivery.createMany({
    data: rows.map((row) => ({
      ...row,
      event,
      taskId: facts.task.id,
      round: facts.task.round,
      occurredAt: facts.occurredAt,
      nextAttemptAt: facts.occurredAt,
    })),
  });
  return rows.length;
}

async function emailRecipientsOf(tx: DbTx, event: TTaskNotificationEvent) {
  const chosen = await tx.notificationPreference.findMany({ where: { event }, select: { userId: true } });
  if (chosen.length === 0) return [];
  const users = await tx.user.findMany({
    where: { id: { in: chosen.map((c) => c.userId) }, isDisabled: false },
    select: { id: true, email: true, roles: true },
  });
  // A choice made under a role the user no longer has is not honoured (they could not open the link).
  return users.filter((u) =>
    canReceiveNotification({ userId: u.id, email: u.email, roles: parseRoles(u.roles) }, event),
  );
}

async function webhooksFor(tx: DbTx, event: NotificationEvent) {
  return tx.notificationWebhook.findMany({
    where: { removedAt: null, events: { has: event } },
    select: { id: true, url: true },
  });
}

/** An operator's "Send test": one webhook delivery that names no task, sent like any other. */
export async function enqueueWebhookTest(db: Db | DbTx, options: { webhookId: string; url: string; now: Date }) {
  return db.notificationDelivery.create({
    data: {
      event: "webhook_test",
      channel: "webhook",
      webhookId: options.webhookId,
      recipient: options.url,
      occurredAt: options.now,
      nextAttemptAt: options.now,
    },
  });
}
