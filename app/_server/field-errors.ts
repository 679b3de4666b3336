/**
 * Zod issues → the per-field errors a form shows next to its fields. Every issue is kept (not
 * only the first), keyed by its dotted path; issues about the whole input are keyed "" and only
 * appear in the summary. Messages are bounded: a form never shows a wall of text.
 */
import type { z } from "zod";

/** Field path ("reason", "limits.maxRequests") → its messages, in the schema's order. */
export type TFieldErrors = Record<string, string[]>;

const MAX_MESSAGES_PER_FIELD = 5;
const MAX_MESSAGE_CHARS = 300;
const MAX_SUMMARY_CHARS = 600;

export function fieldErrorsOf(issues: readonly z.core.$ZodIssue[]): TFieldErrors {
  const errors: TFieldErrors = {};
  for (const issue of issues) {
    const key = issue.path.map(String).join(".");
    const messages = (errors[key] ??= []);
    const message = issue.message.slice(0, MAX_MESSAGE_CHARS);
    if (messages.length < MAX_MESSAGES_PER_FIELD && !messages.includes(message)) messages.push(message);
  }
  return errors;
}

/** One line for the form's status area: every field with its first message. */
export function summaryOf(errors: TFieldErrors): string {
  const parts = Object.entries(errors).map(([field, messages]) => `${field || "input"}: ${messages[0]}`);
  const summary = parts.length === 1 ? parts[0]! : `${parts.length} fields need attention — ${parts.join("; ")}`;
  return summary.length > MAX_SUMMARY_CHARS ? `${summary.slice(0, MAX_SUMMARY_CHARS - 1)}…` : summary;
}
