import { createAttemptGroup } from "../../../lib/attempts/create-attempt-group";
import { exportResults } from "../../../lib/attempts/export-results";
import { readAttemptComparison } from "../../../lib/review/read-attempt-comparison";
import { parseCommandArgs, withDatabase, type Command } from "../context";
import { ISSUE_ARG_OPTIONS, readIssueArgs } from "../issue-args";
import { printResult, table, UsageError } from "../output";

export const attemptCreate: Command = {
  summary: "hand one issue to several agent profiles at once (one task per attempt; a name may repeat)",
  usage: "attempt create --repo owner/name --issue N --prompt-file F --agents a,b,c [--base REF] [--title T] [--json]",
  example:
    "schoolcore attempt create --repo demo/calculator --issue 1 --base main --prompt-file issue.txt --agents alice,bob,reference-openai",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, { ...ISSUE_ARG_OPTIONS, agents: { type: "string" } });
    const issue = await readIssueArgs(values, [{ name: "--agents", value: values.agents }]);
    const { group, tasks } = await withDatabase(context, ({ db }) =>
      createAttemptGroup({ db, env: context.env }, { ...issue, agents: values.agents!, actor: null }),
    );
    printResult(
      context.isJson,
      {
        groupId: group.id,
        tasks: tasks.map((t) => ({
          id: t.id,
          state: t.state,
          agentProfileVersionId: t.agentProfileVersionId,
          baseSha: t.baseSha,
        })),
      },
      () => [`created attempt group ${group.id}`, ...tasks.map((t) => `  task ${t.id} (${t.state})`)].join("\n"),
    );
  },
};

export const attemptShow: Command = {
  summary: "compare the attempts of one group (agent, owner, state, checks, changes, rounds, tokens, cost)",
  usage: "attempt show --group ID [--json]",
  example: "schoolcore attempt show --group 3f0c2a9e-5b1d-4c1e-9a57-0d9f2c8e4b11",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, { group: { type: "string" } });
    if (!values.group) throw new UsageError("--group is required");
    const comparison = await withDatabase(context, ({ db }) =>
      readAttemptComparison({ db, dataDir: context.env.dataDir }, { groupId: values.group! }),
    );
    printResult(context.isJson, comparison, () =>
      [
        `attempt group ${comparison.group.id}: ${comparison.group.repository ?? "?"} #${comparison.group.issueNumber}${comparison.group.chosenTaskId ? ` — chosen ${comparison.group.chosenTaskId}` : ""}`,
        table(
          comparison.attempts.map((a) => ({
            task: a.taskId,
            agent: a.agent ?? "-",
            owner: a.isOwnerHidden ? "(hidden)" : (a.owner ?? "-"),
            state: a.state,
            checks: a.checksPassed === null ? "-" : `${a.checksPassed}/${a.checksFailed}`,
            rounds: String(a.rounds),
            tokens: String(a.inputTokens + a.outputTokens),
          })),
          ["task", "agent", "owner", "state", "checks", "rounds", "tokens"],
        ),
      ].join("\n"),
    );
  },
};

export const resultsExport: Command = {
  summary: "export one row per task (agent, owner, version, rounds, checks, decision, tokens, cost) as CSV on stdout",
  usage: "results export --format csv [--repo R] [--from YYYY-MM-DD] [--to YYYY-MM-DD]",
  example: "schoolcore results export --format csv --repo demo/calculator --from 2026-09-01 > results.csv",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, {
      format: { type: "string" },
      repo: { type: "string" },
      from: { type: "string" },
      to: { type: "string" },
    });
    if ((values.format ?? "csv") !== "csv") throw new UsageError("--format csv is the only format");
    const { csv } = await withDatabase(context, ({ db }) =>
      exportResults({ db }, { format: "csv", repository: values.repo, from: values.from, to: values.to }),
    );
    process.stdout.write(csv);
  },
};
