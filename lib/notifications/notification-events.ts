/**
 * Which task transitions are worth telling someone about (issue 30), who may choose each one, and
 * where its link points. One table: the enqueuer, the profile page and the sender all read it.
 */
import { can } from "../auth/permissions";
import type { TAction } from "../contract/actions";
import type { Actor } from "../contract/actor";
import type { NotificationEvent, TaskState } from "../db/generated/enums";

/** The events a person or a webhook can subscribe to (webhook_test is an operator's button, not a subscription). */
export const TASK_NOTIFICATION_EVENTS = [
  "review_pending",
  "agent_finished",
  "task_blocked",
  "pr_open",
] as const satisfies readonly NotificationEvent[];
export type TTaskNotificationEvent = (typeof TASK_NOTIFICATION_EVENTS)[number];

export const NOTIFICATION_EVENT_INFO = {
  review_pending: {
    label: "A candidate reaches review",
    title: "Review pending",
    audience: ["review.view", "operator.view"],
  },
  agent_finished: { label: "A round's student agent finished", title: "Agent finished", audience: ["operator.view"] },
  task_blocked: { label: "A task is blocked", title: "Task blocked", audience: ["operator.view"] },
  pr_open: { label: "A pull request opened", title: "Pull request open", audience: ["review.view", "operator.view"] },
} as const satisfies Record<TTaskNotificationEvent, { label: string; title: string; audience: readonly TAction[] }>;

/**
 * The event a transition causes, or null. "A round's agent finished" is the move out of running
 * into collecting: the student guest is done and its output is being fetched (a round that fails
 * instead is task_blocked, or a plain failure nobody subscribed to).
 */
export function taskNotificationEventOf(from: TaskState, to: TaskState): TTaskNotificationEvent | null {
  if (to === "review_pending") return "review_pending";
  if (from === "running" && to === "collecting") return "agent_finished";
  if (to === "blocked") return "task_blocked";
  if (to === "pr_open") return "pr_open";
  return null;
}

/** Whether this actor may be emailed about the event: it must be able to open the link it gets. */
export function canReceiveNotification(actor: Actor, event: TTaskNotificationEvent): boolean {
  return NOTIFICATION_EVENT_INFO[event].audience.some((action) => can(actor, action));
}

/**
 * The page a recipient can open for the event: a teacher gets the candidate's review page when
 * there is one; an operator the task page. Null = this recipient may see neither (fails closed).
 */
export function notificationPathFor(
  actor: Actor,
  target: { event: TTaskNotificationEvent; taskId: string; candidateId: string | null },
): string | null {
  if (!canReceiveNotification(actor, target.event)) return null;
  if (target.candidateId && can(actor, "review.view"))
    return `/teacher/candidates/${encodeURIComponent(target.candidateId)}`;
  if (can(actor, "operator.view")) return `/operator/tasks/${encodeURIComponent(target.taskId)}`;
  return null;
}

export function isTaskNotificationEvent(event: NotificationEvent): event is TTaskNotificationEvent {
  return (TASK_NOTIFICATION_EVENTS as readonly string[]).includes(event);
}
