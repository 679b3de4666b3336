/**
 * `schoolcore agent add | edit | list | show` (issue 26): the operator's agent profiles. The code
 * comes from a directory (packed by School-Core itself) or an archive (tar or tar.gz), and is
 * checked like a candidate archive before anything is stored.
 */
import { parseEnvironmentPairs } from "../../../lib/agents/agent-environment";
import { addAgentProfile } from "../../../lib/agents/add-agent-profile";
import {
  getAgentProfileWithDependencies,
  listAgentProfilesWithDependencies,
  type TAgentDependencyState,
} from "../../../lib/dependencies/agent-dependency-state";
import { editAgentProfile } from "../../../lib/agents/edit-agent-profile";
import type { TGuestImage } from "../../../lib/contract/guest-image";
import type { TAgentCodeSource } from "../../../lib/agents/store-agent-code";
import { parseCommandArgs, withDatabase, type Command, type CommandContext } from "../context";
import { printResult, table, UsageError } from "../output";

const PROFILE_OPTIONS = {
  name: { type: "string" },
  dir: { type: "string" },
  archive: { type: "string" },
  command: { type: "string" },
  owner: { type: "string" },
  description: { type: "string" },
  env: { type: "string", multiple: true },
  image: { type: "string" },
} as const;

function readProfileFlags(context: CommandContext) {
  const { values } = parseCommandArgs(context.argv, PROFILE_OPTIONS);
  if (!values.name) throw new UsageError("--name is required");
  if (values.dir && values.archive) throw new UsageError("give --dir or --archive, not both");
  const code: TAgentCodeSource | undefined = values.dir
    ? { kind: "directory", path: values.dir }
    : values.archive
      ? { kind: "archive", path: values.archive }
      : undefined;
  let command: string[] | undefined;
  if (values.command !== undefined) {
    try {
      command = JSON.parse(values.command) as string[];
    } catch {
      throw new UsageError('--command is a JSON array of strings, e.g. \'["node","agent.mjs"]\'');
    }
  }
  // A guest image of the profile's own (JSON, as the guest.image setting takes it; null = guest.image).
  // It runs only once qualified: `probe run --image-of-profile NAME`.
  let image: unknown;
  if (values.image !== undefined) {
    try {
      image = JSON.parse(values.image);
    } catch {
      throw new UsageError(
        '--image is JSON, e.g. \'{"type":"smolmachine","reference":"school-core/node24-alice"}\' (null = guest.image)',
      );
    }
  }
  let environment: Record<string, string> | undefined;
  if (values.env) {
    const parsed = parseEnvironmentPairs(values.env);
    if (parsed.kind === "refused") throw new UsageError(`--env ${parsed.reason}`);
    environment = parsed.env;
  }
  return {
    name: values.name,
    owner: values.owner,
    description: values.description,
    command,
    environment,
    code,
    ...(image === undefined ? {} : { image: image as TGuestImage | null }),
  };
}

function versionView(
  profile: { name: string; owner: string; isBuiltIn: boolean },
  version: {
    version: number;
    codeDigest: string | null;
    description: string;
    command: unknown;
    dependencies?: TAgentDependencyState;
  },
) {
  return {
    name: profile.name,
    owner: profile.owner,
    version: version.version,
    codeDigest: version.codeDigest,
    isBuiltIn: profile.isBuiltIn,
    description: version.description,
    command: version.command,
    ...(version.dependencies ? { dependencies: version.dependencies } : {}),
  };
}

/** What add and edit say about the code's lockfile: its dependencies are built at the first task. */
function lockfileNote(version: { dependencyRecipe: string | null }): string {
  return version.dependencyRecipe
    ? `; its lockfile selects the ${version.dependencyRecipe} recipe: the trusted builder installs it before its first task`
    : "";
}

/** One line for a version's dependency bundle: "-" (no lockfile), or its recipe and state. */
function dependenciesText(state: TAgentDependencyState): string {
  if (state.state === "none") return "-";
  if (state.state === "built")
    return `${state.recipe} built (${state.packageCount} packages, ${state.artifactDigest.slice(0, 12)})`;
  if (state.state === "failed") return `${state.recipe} failed (${state.errorCode ?? "?"})`;
  return `${state.recipe} ${state.state}`;
}

export const agentAdd: Command = {
  summary: "add an agent profile (its code from a directory or a tar/tar.gz archive)",
  usage:
    "agent add --name N (--dir DIR | --archive FILE) --command JSON [--owner O] [--description D] [--env K=V ...] [--image JSON] [--json]",
  example:
    "schoolcore agent add --name alice --owner 'Alice B.' --dir ./alice-agent --command '[\"node\",\"agent.mjs\"]'",
  async run(context) {
    const flags = readProfileFlags(context);
    if (!flags.command) throw new UsageError("--command is required (a JSON array of strings)");
    const { profile, version } = await withDatabase(context, ({ db }) =>
      addAgentProfile({ db, dataDir: context.env.dataDir }, { ...flags, command: flags.command!, actor: null }),
    );
    printResult(
      context.isJson,
      versionView(profile, version),
      () =>
        `added agent ${profile.name} v1${version.codeDigest ? ` (code ${version.codeDigest})` : ""}${lockfileNote(version)}`,
    );
  },
};

export const agentEdit: Command = {
  summary: "edit an agent profile: a new version (tasks already created keep theirs)",
  usage:
    "agent edit --name N [--dir DIR | --archive FILE] [--command JSON] [--owner O] [--description D] [--env K=V ...] [--image JSON] [--json]",
  example: "schoolcore agent edit --name alice --dir ./alice-agent   # a new version with the new code",
  async run(context) {
    const flags = readProfileFlags(context);
    const { profile, version } = await withDatabase(context, ({ db }) =>
      editAgentProfile({ db, dataDir: context.env.dataDir }, { ...flags, actor: null }),
    );
    printResult(
      context.isJson,
      versionView(profile, version),
      () =>
        `agent ${profile.name} is now v${version.version}${version.codeDigest ? ` (code ${version.codeDigest})` : ""}${lockfileNote(version)}`,
    );
  },
};

export const agentList: Command = {
  summary: "list agent profiles (built-in reference agents first)",
  usage: "agent list [--json]",
  example: "schoolcore agent list --json",
  async run(context) {
    parseCommandArgs(context.argv, {});
    const profiles = await withDatabase(context, ({ db }) => listAgentProfilesWithDependencies({ db }));
    const rows = profiles.map((p) => versionView(p, p));
    printResult(context.isJson, rows, () =>
      table(
        rows.map((r) => ({
          name: r.name,
          owner: r.owner,
          version: `v${r.version}`,
          codeDigest: r.codeDigest ? r.codeDigest.slice(0, 12) : "-",
          dependencies: r.dependencies ? dependenciesText(r.dependencies) : "-",
          isBuiltIn: r.isBuiltIn ? "built-in" : "",
          description: r.description.slice(0, 60),
        })),
        ["name", "owner", "version", "codeDigest", "dependencies", "isBuiltIn", "description"],
      ),
    );
  },
};

export const agentShow: Command = {
  summary: "show an agent profile with every version",
  usage: "agent show --name N [--json]",
  example: "schoolcore agent show --name reference-openai",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, { name: { type: "string" } });
    if (!values.name) throw new UsageError("--name is required");
    const profile = await withDatabase(context, ({ db }) =>
      getAgentProfileWithDependencies({ db }, { name: values.name! }),
    );
    const view = {
      name: profile.name,
      owner: profile.owner,
      isBuiltIn: profile.isBuiltIn,
      currentVersion: profile.currentVersion,
      versions: profile.versions.map((v) => ({
        version: v.version,
        description: v.description,
        command: v.command,
        environment: v.environment,
        codeDigest: v.codeDigest,
        codeBytes: v.codeBytes,
        dependencies: v.dependencies,
        image: v.image,
        createdAt: v.createdAt,
      })),
    };
    printResult(context.isJson, view, () =>
      [
        `agent ${view.name}${view.isBuiltIn ? " (built-in)" : ""}, owner ${view.owner || "-"}, current v${view.currentVersion}`,
        ...view.versions.map(
          (v) =>
            `  v${v.version}  ${v.createdAt.toISOString()}  ${JSON.stringify(v.command)}  code ${v.codeDigest ?? "-"}${v.image ? `  image ${JSON.stringify(v.image)}` : ""}  dependencies ${dependenciesText(v.dependencies)}  ${v.description}`,
        ),
      ].join("\n"),
    );
  },
};
