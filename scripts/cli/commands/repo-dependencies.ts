/**
 * `schoolcore repo setup|bundle build|bundle show|bundle rebuild-candidate|bundle cancel` (issue
 * 18): the repository's dependency recipe, a build request run here at once (a trusted setup run
 * on a builder guest against the configured substrate, with a registry broker on loopback — the
 * same request the dependencies page queues for a worker), what was built and asked for, and the
 * withdrawal of a queued or running request.
 */
import { cancelBundleBuildRequest } from "../../../lib/dependencies/bundle-build-requests";
import { getRepositoryDependencies } from "../../../lib/dependencies/get-repository-dependencies";
import { buildBundleNow } from "../../../lib/dependencies/run-bundle-build-request";
import { SETUP_RECIPE_KINDS, type TSetupRecipeKind } from "../../../lib/contract/setup-recipe-kinds";
import { setRepositorySetup } from "../../../lib/dependencies/set-repository-setup";
import { createSubstrate } from "../../../lib/machines/create-substrate";
import type { Db } from "../../../lib/db/client";
import { formatBytes, formatDateTime, formatDuration } from "../../../lib/format/format";
import type { TEnv } from "../../../lib/env";
import { parseCommandArgs, withDatabase, type Command } from "../context";
import { printResult, table, UsageError } from "../output";

const DEFAULT_NPM_REGISTRY = "https://registry.npmjs.org/";

async function withSubstrate<T>(
  db: Db,
  env: TEnv,
  body: (deps: {
    db: Db;
    env: TEnv;
    substrate: ReturnType<typeof createSubstrate>;
    readyTimeoutMs: number;
  }) => Promise<T>,
): Promise<T> {
  const substrate = createSubstrate({ db, env });
  try {
    return await body({ db, env, substrate, readyTimeoutMs: 60_000 });
  } finally {
    await (substrate as { close?: () => Promise<void> }).close?.();
  }
}

export const repoSetup: Command = {
  summary: "set a repository's dependency setup recipe and registries (or --clear)",
  usage:
    "repo setup --repo NAME --recipe npm-ci|pnpm-install|pip-require-hashes|custom [--registry URL]… [--timeout S] [--command JSON --inputs a,b --output DIR] [--clear] [--json]",
  example: "schoolcore repo setup --repo school/app --recipe npm-ci --registry https://registry.npmjs.org/",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, {
      repo: { type: "string" },
      recipe: { type: "string" },
      registry: { type: "string", multiple: true },
      timeout: { type: "string" },
      command: { type: "string" },
      inputs: { type: "string" },
      output: { type: "string" },
      clear: { type: "boolean" },
    });
    if (!values.repo) throw new UsageError("--repo is required");
    if (!values.clear && !SETUP_RECIPE_KINDS.includes(values.recipe as TSetupRecipeKind))
      throw new UsageError(`--recipe must be one of ${SETUP_RECIPE_KINDS.join(", ")}`);
    let command: unknown;
    if (values.command) {
      try {
        command = JSON.parse(values.command);
      } catch {
        throw new UsageError("--command must be a JSON array of strings");
      }
    }
    const recipe = values.clear
      ? null
      : {
          v: 1 as const,
          kind: values.recipe as TSetupRecipeKind,
          registries: values.registry?.length ? values.registry : [DEFAULT_NPM_REGISTRY],
          ...(values.timeout ? { timeoutSeconds: Number(values.timeout) } : {}),
          ...(command !== undefined ? { command: command as string[] } : {}),
          ...(values.inputs ? { inputFiles: values.inputs.split(",").map((s) => s.trim()) } : {}),
          ...(values.output ? { outputDir: values.output } : {}),
        };
    const result = await withDatabase(context, ({ db }) =>
      setRepositorySetup({ db }, { name: values.repo!, recipe, actor: null }),
    );
    printResult(context.isJson, result, () =>
      result.recipe
        ? `${values.repo}: ${result.recipe.kind} via ${result.recipe.registries.join(", ")} (recipe ${result.recipeDigest!.slice(0, 12)})`
        : `${values.repo}: no dependency setup`,
    );
  },
};

export const repoBundleBuild: Command = {
  summary:
    "build (or reuse) the dependency bundle for a commit's lockfile in a trusted builder guest, now, in this process",
  usage: "repo bundle build --repo NAME [--ref BRANCH|SHA] [--force] [--json]",
  example: "schoolcore repo bundle build --repo school/app --ref main",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, {
      repo: { type: "string" },
      ref: { type: "string" },
      force: { type: "boolean" },
    });
    if (!values.repo) throw new UsageError("--repo is required");
    const built = await withDatabase(context, ({ db }) =>
      withSubstrate(db, context.env, (deps) =>
        buildBundleNow(deps, {
          kind: "base",
          repository: values.repo!,
          ref: values.ref,
          isForced: values.force,
          actor: null,
        }),
      ),
    );
    const result = {
      requestId: built.request.id,
      repository: values.repo!.trim().toLowerCase(),
      sha: built.request.sourceSha!,
      isReused: built.request.isReused ?? false,
      elapsedMs: built.elapsedMs,
      bundle: built.bundle,
    };
    printResult(
      context.isJson,
      result,
      () =>
        `${result.repository}@${result.sha.slice(0, 12)}: bundle ${result.bundle.id} (${formatBytes(result.bundle.sizeBytes)}, ${result.bundle.packageCount} packages) ${result.isReused ? "reused" : `built in ${formatDuration(result.elapsedMs)}`} (build request ${result.requestId})`,
    );
  },
};

export const repoBundleShow: Command = {
  summary: "show a repository's dependency recipe, bundles and setup runs",
  usage: "repo bundle show --repo NAME [--json]",
  example: "schoolcore repo bundle show --repo school/app",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, { repo: { type: "string" } });
    if (!values.repo) throw new UsageError("--repo is required");
    const view = await withDatabase(context, ({ db }) => getRepositoryDependencies({ db }, { name: values.repo! }));
    printResult(context.isJson, view, () =>
      [
        `${view.repository.name}: ${view.recipe ? `${view.recipe.kind} via ${view.recipe.registries.join(", ")}` : "no dependency setup"}`,
        table(
          view.bundles.map((b) => ({
            bundle: b.id.slice(0, 8),
            current: b.isCurrent ? "yes" : "",
            size: formatBytes(b.sizeBytes),
            packages: String(b.packageCount),
            from: `${b.source}@${b.sourceSha.slice(0, 12)}`,
            built: formatDateTime(b.createdAt, { precision: "second" }),
          })),
          ["bundle", "current", "size", "packages", "from", "built"],
        ),
        table(
          view.setupRuns.map((r) => ({
            run: r.id.slice(0, 8),
            state: r.state,
            reason: r.reason,
            took: r.durationMs === null ? "" : formatDuration(r.durationMs),
            fetched: r.fetchLog ? `${r.fetchLog.served} (${formatBytes(r.fetchLog.bytesServed)})` : "",
            refused: r.fetchLog ? String(r.fetchLog.refused) : "",
          })),
          ["run", "state", "reason", "took", "fetched", "refused"],
        ),
        table(
          view.buildRequests.map((r) => ({
            request: r.id,
            state: r.state,
            asked: `${r.kind === "candidate" ? `candidate ${r.candidateId}` : (r.ref ?? "default branch")}${r.isForced ? " (rebuild)" : ""}`,
            note: r.waitingReason ?? (r.errorCode ? `${r.errorCode}: ${r.errorSummary ?? ""}`.slice(0, 120) : ""),
          })),
          ["request", "state", "asked", "note"],
        ),
      ].join("\n"),
    );
  },
};

export const repoBundleRebuildCandidate: Command = {
  summary: "build a bundle from a candidate's lockfile (a separate, audited operator decision), now, in this process",
  usage: "repo bundle rebuild-candidate --candidate ID [--json]",
  example: "schoolcore repo bundle rebuild-candidate --candidate cand_0123456789abcdef0123456789abcdef",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, { candidate: { type: "string" } });
    if (!values.candidate) throw new UsageError("--candidate is required");
    const built = await withDatabase(context, ({ db }) =>
      withSubstrate(db, context.env, (deps) =>
        buildBundleNow(deps, { kind: "candidate", candidateId: values.candidate!, actor: null }),
      ),
    );
    const bundle = built.bundle;
    printResult(
      context.isJson,
      bundle,
      () =>
        `bundle ${bundle.id} from candidate ${values.candidate} (${formatBytes(bundle.sizeBytes)}, ${bundle.packageCount} packages; build request ${built.request.id})`,
    );
  },
};

export const repoBundleCancel: Command = {
  summary: "cancel a build request: a queued one never starts, a running one is stopped and its builder destroyed",
  usage: "repo bundle cancel --request ID [--json]",
  example: "schoolcore repo bundle cancel --request 2c9d4e1f-6a7b-4c8d-9e0f-1a2b3c4d5e6f",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, { request: { type: "string" } });
    if (!values.request) throw new UsageError("--request is required");
    if (!/^[0-9a-f-]{36}$/i.test(values.request)) throw new UsageError("--request must be a build request id (a UUID)");
    const { from } = await withDatabase(context, ({ db }) =>
      cancelBundleBuildRequest({ db }, { requestId: values.request!, actor: null }),
    );
    printResult(context.isJson, { requestId: values.request, state: "cancelled", from }, () =>
      from === "running"
        ? `build request ${values.request} cancelled while it ran: its worker stops it within seconds and destroys the builder`
        : `build request ${values.request} cancelled before it started: nothing was built`,
    );
  },
};
