/**
 * `npm run bench:probes [-- --runs N]`: full qualification runs (every probe, P0–P8) on the local
 * substrate, as `probe run` executes them (same code, same probe-task driver), N times after one
 * warm-up run. Reported: the run's wall time p50 (issue 29's target: ≤ 20 s) beside its floor in the
 * same run — the longest single probe, which no ordering of the probes can go below — and each
 * probe's p50 duration. The local substrate runs in this process and stands in for the provider
 * (its bubblewrap spawns are the provider's, as in lib/probes/run-probes.integration.test.ts); the
 * real relay listener answers P2's relay route. A benchmark, not a test: it asserts only that the
 * runs passed (a failed run's time means nothing).
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { DEFAULT_GUEST_IMAGE } from "../../sidecars/local-substrate/default-guest-image";
import { DEMO_TRUSTED_MANIFEST } from "../../lib/contract/trusted-manifest";
import type { Db } from "../../lib/db/client";
import { parseEnv } from "../../lib/env";
import { probeDepsFor } from "../../lib/jobs/run-probe-job";
import { executeProbeRun } from "../../lib/probes/execute-probe-run";
import { PROBE_IDS } from "../../lib/probes/probe-registry";
import { getProbeRunOrThrow } from "../../lib/probes/probe-run.repo";
import { requestProbeRun } from "../../lib/probes/request-probe-run";
import { startProbeRelayListener } from "../../lib/probes/testing/probe-relay-listener";
import { writeSetting } from "../../lib/settings/operator-settings";
import { SmolCloudSubstrate } from "../../lib/substrate/smolcloud/smolcloud-substrate";
import { saveTrustedManifest } from "../../lib/verify/trusted-manifests";
import { startTestSubstrate } from "../../sidecars/local-substrate/testing/local-substrate-fixture";
import { withBenchDatabase } from "./bench-database";
import { percentile, printBenchJson, row, type TBenchRow } from "./bench-report";

function flag(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

const RUNS = Number(flag("runs") ?? 3);
if (!Number.isInteger(RUNS) || RUNS < 1) {
  process.stderr.write("usage: bench:probes [-- --runs N]\n");
  process.exit(2);
}

type TMeasuredRun = { wallMs: number; state: string; probes: Map<string, number>; reason: string | null };

/** A failed probe's own list of problems when it has one, else its whole detail. */
function problemsOf(detail: unknown): unknown {
  return typeof detail === "object" && detail !== null && "problems" in detail ? detail.problems : detail;
}

async function main(db: Db): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "probe-bench-"));
  await fs.chmod(dataDir, 0o755);
  const substrate = await startTestSubstrate({ hangCapMs: 9000, readinessDelayMs: 0 });
  const relay = await startProbeRelayListener(db);
  const tokenFile = path.join(dataDir, "substrate-token");
  await fs.writeFile(tokenFile, substrate.token, { mode: 0o600 });
  const env = relay.envFor(
    parseEnv({
      DATA_DIR: dataDir,
      NODE_ENV: "development",
      LOCAL_SUBSTRATE_PORT: new URL(substrate.url).port,
      SMOLCLOUD_TOKEN_FILE: tokenFile,
    }),
  );
  const adapter = new SmolCloudSubstrate({ baseUrl: substrate.url, tokenFile, label: "local" });
  try {
    await writeSetting(
      { db },
      {
        key: "spend.ceilings",
        value: { globalMicros: 1_000_000_000, perTaskMicros: 10_000_000 },
        actor: null,
        reason: "probe bench",
      },
    );
    await writeSetting(
      { db },
      {
        key: "guest.image",
        value: { type: "smolmachine", reference: DEFAULT_GUEST_IMAGE },
        actor: null,
        reason: "probe bench",
      },
    );
    await saveTrustedManifest({ db }, { content: DEMO_TRUSTED_MANIFEST, actor: null });
    // The CLI's probe-task driver settings (scripts/cli/commands/probe.ts).
    const deps = probeDepsFor(
      { db, env, substrate: adapter, pollIntervalMs: 300, readyTimeoutMs: 60_000 },
      { isProviderSpawn: ({ stack }) => stack.includes(`${path.sep}sidecars${path.sep}local-substrate${path.sep}`) },
    );
    const measureOne = async (): Promise<TMeasuredRun> => {
      const queued = await requestProbeRun({ db, env }, { probes: [...PROBE_IDS], actor: null, isRunByCaller: true });
      const started = performance.now();
      const state = await executeProbeRun(deps, { runId: queued.id });
      const wallMs = performance.now() - started;
      const run = await getProbeRunOrThrow({ db }, { runId: queued.id });
      return {
        wallMs,
        state,
        probes: new Map(run.results.map((r) => [r.probe, r.durationMs ?? Number.NaN])),
        reason:
          run.reason === null
            ? null
            : `${run.reason}: ${run.results
                .filter((r) => r.status !== "passed")
                .map((r) => `${r.probe} ${JSON.stringify(problemsOf(r.detail)).slice(0, 400)}`)
                .join("; ")}`,
      };
    };
    process.stderr.write("probe bench: warm-up run …\n");
    const warmUp = await measureOne();
    const runs: TMeasuredRun[] = [];
    for (let i = 0; i < RUNS; i += 1) {
      process.stderr.write(`probe bench: run ${i + 1} of ${RUNS} …\n`);
      runs.push(await measureOne());
    }
    const failed = [warmUp, ...runs].filter((r) => r.state !== "passed");
    const p50 = (values: number[]) => percentile(values, 0.5);
    const wallP50 = p50(runs.map((r) => r.wallMs));
    const longestP50 = p50(runs.map((r) => Math.max(...r.probes.values())));
    const rows: TBenchRow[] = [
      row(
        `full probe run (${PROBE_IDS.length} probes): wall p50 of ${RUNS}`,
        wallP50 / 1000,
        "s",
        { label: "longest single probe (p50)", value: longestP50 / 1000 },
        "≤ 20 s",
      ),
      row(`full probe run: wall max of ${RUNS}`, Math.max(...runs.map((r) => r.wallMs)) / 1000, "s"),
      ...PROBE_IDS.map((id) => row(`probe ${id}: duration p50`, p50(runs.map((r) => r.probes.get(id) ?? NaN)), "ms")),
    ];
    const lines = [
      "",
      `probe runs on the local substrate (${os.cpus().length} cores, load ${os.loadavg()[0]!.toFixed(2)}), warm-up ${(warmUp.wallMs / 1000).toFixed(1)} s:`,
      ...runs.map(
        (r, i) =>
          `  run ${i + 1}: ${r.state} in ${(r.wallMs / 1000).toFixed(1)} s — ${[...r.probes].map(([id, ms]) => `${id} ${(ms / 1000).toFixed(1)} s`).join(", ")}`,
      ),
      ...failed.map((r) => `  NOT PASSED: ${r.reason ?? "(no reason)"}`),
      "",
    ];
    process.stdout.write(lines.join("\n"));
    printBenchJson({
      bench: "probes",
      ok: failed.length === 0,
      rows,
      notes: failed.map((r) => `a run did not pass: ${r.reason ?? "(no reason)"}`.slice(0, 300)),
    });
    if (failed.length > 0) process.exitCode = 1;
  } finally {
    await adapter.close();
    await relay.close();
    await substrate.cleanup();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await withBenchDatabase("probe-bench", (db) => main(db));
