import { addTargetRepository, listTargetRepositories } from "../../../lib/repos/target-repositories";
import { parseCommandArgs, withDatabase, type Command } from "../context";
import { printResult, table, UsageError } from "../output";

export const repoAdd: Command = {
  summary: "add a target repository",
  usage: "repo add --name owner/name --url GIT_URL [--default-branch B] [--json]",
  example: "schoolcore repo add --name school/app --url https://github.com/school/app.git --default-branch main",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, {
      name: { type: "string" },
      url: { type: "string" },
      "default-branch": { type: "string" },
    });
    if (!values.name || !values.url) throw new UsageError("--name and --url are required");
    const repo = await withDatabase(context, ({ db }) =>
      addTargetRepository(
        { db },
        { name: values.name!, cloneUrl: values.url!, defaultBranch: values["default-branch"], actor: null },
      ),
    );
    printResult(
      context.isJson,
      repo,
      () => `added ${repo.name} (${repo.cloneUrl}, default branch ${repo.defaultBranch})`,
    );
  },
};

export const repoList: Command = {
  summary: "list target repositories",
  usage: "repo list [--json]",
  example: "schoolcore repo list",
  async run(context) {
    parseCommandArgs(context.argv, {});
    const repos = await withDatabase(context, ({ db }) => listTargetRepositories({ db }));
    printResult(context.isJson, repos, () =>
      table(
        repos.map((r) => ({ name: r.name, url: r.cloneUrl, branch: r.defaultBranch })),
        ["name", "url", "branch"],
      ),
    );
  },
};
