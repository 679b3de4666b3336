/**
 * The words of a notification. Email is plain text, so nothing needs escaping, but a task's issue
 * title is written by whoever filed the issue: it is stripped of control characters (no header
 * injection through the subject, no terminal tricks) and bounded, and nothing else untrusted — the
 * prompt, the guest's output, an error summary — is ever included.
 */
import type { NotificationEvent } from "../db/generated/enums";
import { boundText, stripControlCharacters } from "../redact";
import { NOTIFICATION_EVENT_INFO, isTaskNotificationEvent } from "./notification-events";

export const MAX_TITLE_CHARS = 80;

export type TNotificationSubject = {
  event: NotificationEvent;
  /** null only for webhook_test */
  task: { repository: string; issueNumber: number; issueTitle: string; round: number; errorCode: string | null } | null;
  /** absolute link for this recipient */
  link: string;
  profileLink: string;
};

function boundedTitle(title: string): string {
  return boundText(stripControlCharacters(title).replace(/\s+/g, " ").trim(), MAX_TITLE_CHARS);
}

export function renderNotificationEmail(subject: TNotificationSubject): { subject: string; text: string } {
  const { task } = subject;
  if (!task || !isTaskNotificationEvent(subject.event)) {
    return {
      subject: "[School-Core] Test notification",
      text: `This is a test notification from School-Core.\n\n${subject.link}\n`,
    };
  }
  const info = NOTIFICATION_EVENT_INFO[subject.event];
  const name = `${boundText(stripControlCharacters(task.repository), 140)}#${task.issueNumber}`;
  const title = boundedTitle(task.issueTitle);
  const what = {
    review_pending: `A candidate for ${name} (round ${task.round}) passed its trusted checks and waits for review.`,
    agent_finished: `The student agent of ${name} finished round ${task.round}; its output is being imported.`,
    // an error code is our own closed vocabulary; the summary may quote untrusted output, so it stays on the page
    task_blocked: `Task ${name} is blocked${task.errorCode ? ` (${task.errorCode.replace(/[^A-Z0-9_]/g, "").slice(0, 64)})` : ""}. An operator can look and retry.`,
    pr_open: `The pull request for ${name} is open.`,
  }[subject.event];
  return {
    subject: `[School-Core] ${info.title}: ${name} ${title}`,
    text: [
      `${what}`,
      "",
      `Issue: ${title}`,
      "",
      `Open: ${subject.link}`,
      "",
      `You get this because you chose it on ${subject.profileLink}`,
      "",
    ].join("\n"),
  };
}

/** The webhook's JSON body, version 1: what happened to which task, and where to look. */
export function renderWebhookBody(options: {
  event: NotificationEvent;
  taskId: string | null;
  url: string;
  occurredAt: Date;
}): string {
  return JSON.stringify({
    v: 1,
    event: options.event,
    taskId: options.taskId,
    url: options.url,
    occurredAt: options.occurredAt.toISOString(),
  });
}
