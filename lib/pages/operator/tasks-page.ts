/**
 * The operator's task list (`/operator/tasks`): one page of the newest tasks, optionally of one
 * state, before a cursor. The URL's values are untrusted: an unknown state or a cursor that is not
 * a date is ignored, not an error.
 */
import type { Actor } from "../../contract/actor";
import { listRecentTasks } from "../../tasks/list-tasks";
import { TASK_STATES } from "../../tasks/task-states";
import { assertMayRead, type TPageDeps } from "../page-deps";

export const TASKS_PAGE_SIZE = 25;

export async function readTasksPage(
  deps: TPageDeps,
  input: { actor: Actor; state?: string | undefined; before?: string | undefined },
) {
  assertMayRead(input.actor, "operator.view");
  const state = (TASK_STATES as readonly string[]).includes(input.state ?? "")
    ? (input.state as (typeof TASK_STATES)[number])
    : undefined;
  const before = input.before && !Number.isNaN(Date.parse(input.before)) ? new Date(input.before) : undefined;
  const { items, nextBefore } = await listRecentTasks({ db: deps.db }, { take: TASKS_PAGE_SIZE, state, before });
  return { items, nextBefore, state };
}
