/**
 * The publication of one task as the pull request panel shows it (task detail, the teacher's
 * decision page). Only stored, already bounded and redacted fields; the URL only if it is http(s),
 * because it came from a provider and ends up in an href.
 */
import type { Db } from "../db/client";

export type TPublicationView = {
  taskId: string;
  taskState: string;
  state: "pending" | "open" | "failed";
  reconcileState: string;
  provider: string;
  repository: string;
  branch: string;
  baseRef: string;
  headSha: string;
  number: number | null;
  url: string | null;
  attempts: number;
  lastError: string | null;
  nextAttemptAt: Date | null;
  updatedAt: Date;
};

export function safeHttpUrl(url: string | null): string | null {
  if (!url) return null;
  try {
    const parsed = new URL(url);
    return parsed.protocol === "https:" || parsed.protocol === "http:" ? parsed.toString() : null;
  } catch {
    return null;
  }
}

export async function getPublication(deps: { db: Db }, input: { taskId: string }): Promise<TPublicationView | null> {
  const pull = await deps.db.pullRequest.findUnique({
    where: { taskId: input.taskId },
    include: { task: { select: { state: true } } },
  });
  if (!pull) return null;
  return {
    taskId: pull.taskId,
    taskState: pull.task.state,
    state: pull.state,
    reconcileState: pull.reconcileState,
    provider: pull.provider,
    repository: pull.repository,
    branch: pull.branch,
    baseRef: pull.baseRef,
    headSha: pull.headSha,
    number: pull.number,
    url: safeHttpUrl(pull.url),
    attempts: pull.attempts,
    lastError: pull.lastError,
    nextAttemptAt: pull.nextAttemptAt,
    updatedAt: pull.updatedAt,
  };
}
