import { cancelTask } from "../../../lib/lifecycle/cancel-task";
import { createTask } from "../../../lib/tasks/create-task";
import { getTaskDetail } from "../../../lib/tasks/get-task-detail";
import { listRecentTasks } from "../../../lib/tasks/list-tasks";
import { TASK_STATES } from "../../../lib/tasks/task-states";
import { createSubstrate } from "../../../lib/machines/create-substrate";
import { parseCommandArgs, withDatabase, type Command } from "../context";
import { ISSUE_ARG_OPTIONS, readIssueArgs } from "../issue-args";
import { printResult, table, UsageError } from "../output";

export const taskCreate: Command = {
  summary: "create a task (one issue in one target repository)",
  usage: "task create --repo owner/name --issue N --base REF --prompt-file F [--title T] [--agent NAME] [--json]",
  example:
    "schoolcore task create --repo demo/calculator --issue 1 --base main --prompt-file issue.txt --agent reference-openai",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, { ...ISSUE_ARG_OPTIONS, agent: { type: "string" } });
    const issue = await readIssueArgs(values);
    const task = await withDatabase(context, ({ db }) =>
      createTask({ db, env: context.env }, { ...issue, agent: values.agent, actor: null }),
    );
    printResult(
      context.isJson,
      {
        id: task.id,
        state: task.state,
        baseRef: task.baseRef,
        baseSha: task.baseSha,
        agentProfileVersionId: task.agentProfileVersionId,
      },
      () => `created task ${task.id} (${task.state}) at ${task.baseRef} ${task.baseSha}`,
    );
  },
};

export const taskShow: Command = {
  summary: "show a task with its timeline",
  usage: "task show ID [--json]",
  example: "schoolcore task show 5d0c3e7a-1b2f-4c8d-9e6a-7f1b2c3d4e5f --json",
  async run(context) {
    const { positionals } = parseCommandArgs(context.argv, {}, true);
    if (!positionals[0]) throw new UsageError("a task id is required");
    const task = await withDatabase(context, ({ db }) => getTaskDetail({ db }, { taskId: positionals[0]! }));
    printResult(context.isJson, task, () =>
      [
        `task ${task.id}: ${task.state}${task.errorSummary ? ` — ${task.errorCode}: ${task.errorSummary}` : ""}`,
        `repository ${task.repository.name} issue #${task.issueNumber} base ${task.baseRef} ${task.baseSha}`,
        "timeline:",
        ...task.transitions.map(
          (t) =>
            `  ${t.createdAt.toISOString()}  ${t.fromState ?? "-"} → ${t.toState}${t.reason ? `  (${t.reason})` : ""}`,
        ),
        "machines:",
        ...task.machines.map((m) => `  ${m.purpose} ${m.providerId ?? m.providerName} ${m.state}`),
      ].join("\n"),
    );
  },
};

export const taskList: Command = {
  summary: "list tasks, newest first",
  usage: "task list [--state S] [--limit N] [--json]",
  example: "schoolcore task list --state review_pending --limit 20",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, { state: { type: "string" }, limit: { type: "string" } });
    if (values.state && !(TASK_STATES as readonly string[]).includes(values.state))
      throw new UsageError(`unknown state ${values.state}`);
    const take = Math.min(500, Math.max(1, Number(values.limit ?? 50) || 50));
    const { items } = await withDatabase(context, ({ db }) =>
      listRecentTasks({ db }, { take, state: values.state as never }),
    );
    printResult(context.isJson, items, () =>
      table(
        items.map((t) => ({
          id: t.id,
          state: t.state,
          repository: t.repository,
          issue: `#${t.issueNumber}`,
          created: t.createdAt.toISOString(),
        })),
        ["id", "state", "repository", "issue", "created"],
      ),
    );
  },
};

export const taskCancel: Command = {
  summary: "cancel a task (fail closed, revoke its relay, destroy its guests)",
  usage: "task cancel ID [--json]",
  example: "schoolcore task cancel 5d0c3e7a-1b2f-4c8d-9e6a-7f1b2c3d4e5f",
  async run(context) {
    const { positionals } = parseCommandArgs(context.argv, {}, true);
    if (!positionals[0]) throw new UsageError("a task id is required");
    const task = await withDatabase(context, async ({ db }) => {
      const substrate = createSubstrate({ db, env: context.env });
      try {
        await cancelTask({ db, env: context.env, substrate }, { taskId: positionals[0]!, actor: null });
      } finally {
        await substrate.close();
      }
      return db.task.findUniqueOrThrow({ where: { id: positionals[0]! } });
    });
    printResult(
      context.isJson,
      { id: task.id, state: task.state, errorSummary: task.errorSummary },
      () => `task ${task.id} is ${task.state}: ${task.errorSummary ?? ""}`,
    );
  },
};
