/**
 * `npm run bench:lifecycle [-- --tasks N] [--workers 1,2] [--sequential]`: N demo tasks at once (or,
 * with --sequential, one after the other: latency without the tasks' own contention) through the whole
 * student pipeline on the local substrate (provisioning → the reference student agent in a real
 * bubblewrap guest, asking the scripted demo transport through the mailbox relay → collect →
 * import → trusted verification on a fresh verifier guest → review_pending), with 1 and with 2
 * real worker processes (scripts/worker.ts) on one PostgreSQL.
 *
 * Reported per worker count: tasks per minute (first creation → last review), p50/p95 time from
 * creation to review (from the transition log), the floor beside it — the p50 time the guests
 * themselves ran (running → collecting, plus verifying) — control-plane CPU per task (user + system
 * of the worker processes and the git they waited for, from /proc; the local substrate and its
 * guests run in this process and stand in for the provider, and PostgreSQL is not counted),
 * errors (tasks that ended failed or blocked) and machines left live at the provider. Then a
 * teacher approves each task that reached review, one at a time, and the approve → pull request
 * span is read from the transition log (a local forge stands in for GitHub: approve-to-pr.ts).
 * Before the phases, machine create → first command output is timed through the SmolCloud
 * adapter (first-command.ts).
 *
 * Dispatch is opened with the test fixture's recorded passing run (the probes themselves are
 * `probe run`'s business). A benchmark, not a test: it prints a table and asserts nothing.
 *
 * This file reads the flags and sets the world up; one phase per worker count is lifecycle-phase.ts
 * (its worker processes: bench-worker-process.ts) and the table and rows are lifecycle-report.ts.
 */
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { Db } from "../../lib/db/client";
import { DEMO_REPOSITORY, writeDemoRepository } from "../../lib/demo/demo-target";
import { DEMO_SCRIPTED_COMPLETIONS } from "../../lib/demo/seed-demo-environment";
import { DEMO_TRUSTED_MANIFEST } from "../../lib/contract/trusted-manifest";
import { DEFAULT_TASK_LIMITS } from "../../lib/contract/limits";
import { parseEnv } from "../../lib/env";
import { qualifyForTests } from "../../lib/probes/testing/qualify-for-tests";
import { setRelayUpstream } from "../../lib/relay/upstream-setting";
import { addTargetRepository } from "../../lib/repos/target-repositories";
import { writeSetting } from "../../lib/settings/operator-settings";
import { saveTrustedManifest } from "../../lib/verify/trusted-manifests";
import { startTestSubstrate } from "../../sidecars/local-substrate/testing/local-substrate-fixture";
import { measureStageFloors, type TStageFloors } from "./stage-floors";
import { withBenchDatabase } from "./bench-database";
import { setUpPublication } from "./approve-to-pr";
import { measureFirstCommand } from "./first-command";
import { runPhase, type TPhase } from "./lifecycle-phase";
import { printLifecycleReport } from "./lifecycle-report";
import { SmolCloudSubstrate } from "../../lib/substrate/smolcloud/smolcloud-substrate";

function flag(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

const TASKS = Number(flag("tasks") ?? 50);
const WORKER_COUNTS = (flag("workers") ?? "1,2").split(",").map(Number);
const TIMEOUT_MS = Number(flag("timeout-minutes") ?? 30) * 60_000;
const IS_SEQUENTIAL = process.argv.includes("--sequential");
if (!Number.isInteger(TASKS) || TASKS < 1 || WORKER_COUNTS.some((n) => !Number.isInteger(n) || n < 1)) {
  process.stderr.write("usage: bench:lifecycle [-- --tasks N] [--workers 1,2] [--sequential] [--timeout-minutes 30]\n");
  process.exit(2);
}

async function main(db: Db, databaseUrl: string): Promise<void> {
  const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "lifecycle-bench-"));
  await fs.chmod(dataDir, 0o755);
  // as `npm start` serves it: no simulated boot (start-local-substrate.ts)
  const substrate = await startTestSubstrate({ readinessDelayMs: 0 });
  let stopForge = async () => undefined as void;
  try {
    const tokenFile = path.join(dataDir, "substrate-token");
    await fs.writeFile(tokenFile, substrate.token, { mode: 0o600 });
    const port = new URL(substrate.url).port;
    const createEnv = parseEnv({
      DATA_DIR: dataDir,
      NODE_ENV: "development",
      LOCAL_SUBSTRATE_PORT: port,
      SMOLCLOUD_TOKEN_FILE: tokenFile,
    });
    const workerEnv = {
      NODE_ENV: "development",
      DATABASE_URL: databaseUrl,
      DATA_DIR: dataDir,
      LOCAL_SUBSTRATE_PORT: port,
      SMOLCLOUD_TOKEN_FILE: tokenFile,
      LOG_LEVEL: "info",
      SCHOOLCORE_FAULT_CRASH_AFTER: "",
    };

    const demo = await writeDemoRepository(path.join(dataDir, "demo-src"));
    await addTargetRepository({ db }, { name: DEMO_REPOSITORY, cloneUrl: demo.path, actor: null });
    const publication = await setUpPublication(db, {
      dataDir,
      repository: DEMO_REPOSITORY,
      sourceDir: demo.path,
      sha: demo.sha,
    });
    stopForge = () => publication.forge.stop();
    await writeSetting(
      { db },
      {
        key: "spend.ceilings",
        value: {
          globalMicros: 1_000_000_000_000,
          perTaskMicros: 100_000_000,
          monthlyGlobalMicros: null,
          monthlyPerTaskMicros: null,
        },
        actor: null,
        reason: "lifecycle bench",
      },
    );
    // A loaded machine must not turn slowness into timeouts: the deadline is generous.
    await writeSetting(
      { db },
      {
        key: "task.limits",
        value: { ...DEFAULT_TASK_LIMITS, wallClockSeconds: 900, memoryMb: 512 },
        actor: null,
        reason: "lifecycle bench",
      },
    );
    await setRelayUpstream({
      db,
      value: { kind: "scripted", scriptFile: DEMO_SCRIPTED_COMPLETIONS },
      reason: "lifecycle bench",
      via: "lifecycle-bench",
    });
    await saveTrustedManifest({ db }, { content: DEMO_TRUSTED_MANIFEST, actor: null });
    await qualifyForTests(db, createEnv);
    const liveAtProvider = async () =>
      ((await substrate.admin("GET", "/admin/machines")).json as { machineCount: number }).machineCount;
    const version = (
      (await db.$queryRaw<{ v: string }[]>`select current_setting('server_version') as v`)[0]?.v ?? "?"
    ).split(" ")[0];

    // Floors measured in the same run, on the same machine, before the load of the phases.
    const floors: TStageFloors = await measureStageFloors(demo.path);
    const adapter = new SmolCloudSubstrate({ baseUrl: substrate.url, tokenFile, label: "local" });
    const firstCommand = await measureFirstCommand(adapter, 10).finally(() => adapter.close());
    const phases: TPhase[] = [];
    for (const workers of WORKER_COUNTS) {
      process.stderr.write(`lifecycle bench: ${TASKS} tasks, ${workers} worker${workers === 1 ? "" : "s"} …\n`);
      phases.push(
        await runPhase(db, {
          workers,
          tasks: TASKS,
          isSequential: IS_SEQUENTIAL,
          timeoutMs: TIMEOUT_MS,
          env: workerEnv,
          createEnv,
          liveAtProvider,
          publication,
        }),
      );
    }

    printLifecycleReport({ phases, tasks: TASKS, isSequential: IS_SEQUENTIAL, version, firstCommand, floors });
  } finally {
    await stopForge().catch(() => undefined);
    await substrate.cleanup();
    await fs.rm(dataDir, { recursive: true, force: true });
  }
}

await withBenchDatabase("lifecycle-bench", (db, url) => main(db, url));
