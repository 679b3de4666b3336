/**
 * `probe run [--only P0,P2] [--image-of-profile NAME]`, `probe list`, `probe show RUN`:
 * qualification runs from the CLI. `run` executes in this process with the same code the worker
 * runs, and exits 0 only when every selected probe passed. With `--image-of-profile` the run
 * qualifies that agent profile's own guest image under the configuration in force (issue 26).
 */
import { createProbeTaskDriver } from "../../../lib/jobs/run-probe-job";
import { formatDateTime, formatDuration } from "../../../lib/format/format";
import { createSubstrate } from "../../../lib/machines/create-substrate";
import { executeProbeRun } from "../../../lib/probes/execute-probe-run";
import { parseProbeSelection } from "../../../lib/probes/probe-registry";
import { closeAbandonedProbeRuns } from "../../../lib/probes/close-abandoned-probe-runs";
import { requestProfileImageProbeRun } from "../../../lib/probes/image-qualification";
import { getProbeRunOrThrow, listProbeRuns, type TProbeRunView } from "../../../lib/probes/probe-run.repo";
import { requestProbeRun } from "../../../lib/probes/request-probe-run";
import { parseCommandArgs, withDatabase, type Command } from "../context";
import { printResult, table, UsageError } from "../output";

function summarize(run: TProbeRunView) {
  return {
    runId: run.id,
    state: run.state,
    substrate: run.substrate,
    configDigest: run.configDigest,
    guestImageOverride: run.guestImageOverride,
    evidenceDigest: run.evidenceDigest,
    passed: run.state === "passed",
    reason: run.reason,
    createdAt: run.createdAt,
    finishedAt: run.finishedAt,
    probes: run.results.map((r) => ({
      id: r.probe,
      status: r.status,
      durationMs: r.durationMs,
      detail: r.detail,
      providerError: r.providerError,
    })),
  };
}

export const probeRun: Command = {
  summary: "run the qualification probes now, in this process (exit 0 only when every selected probe passed)",
  usage: "probe run [--only P0,P2] [--image-of-profile NAME] [--json]",
  example: "schoolcore probe run --image-of-profile alice   # qualify the guest image agent profile alice names",
  async run(context) {
    const { values } = parseCommandArgs(context.argv, {
      only: { type: "string" },
      "image-of-profile": { type: "string" },
    });
    const probes = parseProbeSelection(values.only);
    const profile = values["image-of-profile"];
    const summary = await withDatabase(context, async ({ db }) => {
      const substrate = createSubstrate({ db, env: context.env });
      try {
        await closeAbandonedProbeRuns({ db, env: context.env, substrate });
        const request = { probes, actor: null, isRunByCaller: true };
        const queued = profile
          ? await requestProfileImageProbeRun({ db, env: context.env }, { ...request, profile })
          : await requestProbeRun({ db, env: context.env }, request);
        const ctx = { db, env: context.env, substrate, pollIntervalMs: 300, readyTimeoutMs: 60_000 };
        await executeProbeRun(
          {
            db,
            env: context.env,
            substrate,
            runProbeTask: createProbeTaskDriver(ctx),
            onProgress: (probe, status) => !context.isJson && process.stderr.write(`${probe} ${status}\n`),
          },
          { runId: queued.id },
        );
        return summarize(await getProbeRunOrThrow({ db }, { runId: queued.id }));
      } finally {
        await (substrate as { close?: () => Promise<void> }).close?.();
      }
    });
    printResult(context.isJson, summary, () =>
      [
        `probe run ${summary.runId}: ${summary.passed ? "PASSED" : "FAILED"} (digest ${summary.configDigest.slice(0, 12)}…${profile ? `, the guest image of agent profile ${profile}` : ""})`,
        ...summary.probes.map((p) => `  ${p.id} ${p.status} ${formatDuration(p.durationMs)}`),
        ...(summary.reason ? [`  ${summary.reason}`] : []),
      ].join("\n"),
    );
    if (!summary.passed) process.exitCode = 1;
  },
};

export const probeList: Command = {
  summary: "list recent probe runs",
  usage: "probe list [--json]",
  example: "schoolcore probe list --json",
  async run(context) {
    parseCommandArgs(context.argv, {});
    const runs = await withDatabase(context, async ({ db }) =>
      (await listProbeRuns({ db }, { take: 50 })).map(summarize),
    );
    printResult(context.isJson, runs, () =>
      table(
        runs.map((r) => ({
          run: r.runId,
          state: r.state,
          substrate: r.substrate,
          digest: r.configDigest.slice(0, 12),
          probes: r.probes.map((p) => `${p.id}:${p.status}`).join(" "),
          created: formatDateTime(r.createdAt, { precision: "second" }),
        })),
        ["run", "state", "substrate", "digest", "probes", "created"],
      ),
    );
  },
};

export const probeShow: Command = {
  summary: "show one probe run with each probe's status, duration and detail",
  usage: "probe show RUN [--json]",
  example: "schoolcore probe show 6b1e0c6a-2f4d-4b8e-9d3a-5a7c1e2f9b40",
  async run(context) {
    const { positionals } = parseCommandArgs(context.argv, {}, true);
    if (positionals.length !== 1) throw new UsageError("probe show takes one run id");
    const run = await withDatabase(context, async ({ db }) =>
      summarize(await getProbeRunOrThrow({ db }, { runId: positionals[0]! })),
    );
    printResult(context.isJson, run, () => JSON.stringify(run, null, 2));
  },
};
