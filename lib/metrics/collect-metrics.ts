/**
 * The Prometheus view of School-Core (issue 17), built fresh from the database on every scrape so
 * every process (and a restarted one) reports the same numbers: nothing lives only in a
 * process's memory. Formatting is prom-client's (a well-kept exposition library), never ours.
 *
 * Histograms (task time per step, relay latency) are aggregated in SQL over the append-only
 * transition log and relay call log, so their buckets only ever grow, as Prometheus expects of
 * a histogram, and a scrape costs one grouped query rather than one row per observation.
 */
import { Gauge, Registry, type Metric } from "prom-client";
import type { Db } from "../db/client";
import { MACHINE_STATES } from "../machines/machine-states";
import { RUN_KINDS } from "../runs/run-states";
import { readMachineCapUsage } from "../machines/machine-slots";
import { readSetting } from "../settings/operator-settings";
import { committedInWindow } from "../spend/spend-guard";
import { monthWindowOf } from "../spend/spend-month";
import { TASK_STATES } from "../tasks/task-states";

/** Seconds: a step takes from under a second (queued → provisioning) to hours (review). */
export const STEP_DURATION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 4 * 3600, 24 * 3600, 7 * 24 * 3600];
/** Seconds: a relay call is a model round trip. */
export const RELAY_LATENCY_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

type BucketRow = { key: string; le: number; n: bigint };
type SumRow = { key: string; total: number; n: bigint };

/**
 * A histogram whose buckets were counted by the database. prom-client's Histogram only takes
 * single observations, so this hands prom-client's formatter the same shape its own Histogram
 * produces (`_bucket` cumulative with `le`, `_sum`, `_count`).
 */
function aggregatedHistogram(options: {
  name: string;
  help: string;
  label: string;
  buckets: number[];
  bucketRows: BucketRow[];
  sumRows: SumRow[];
}): Metric {
  const values: { labels: Record<string, string | number>; value: number; metricName: string }[] = [];
  for (const sum of options.sumRows) {
    for (const le of options.buckets) {
      const row = options.bucketRows.find((r) => r.key === sum.key && r.le === le);
      values.push({
        labels: { [options.label]: sum.key, le },
        value: Number(row?.n ?? 0n),
        metricName: `${options.name}_bucket`,
      });
    }
    values.push({
      labels: { [options.label]: sum.key, le: "+Inf" },
      value: Number(sum.n),
      metricName: `${options.name}_bucket`,
    });
    values.push({ labels: { [options.label]: sum.key }, value: sum.total, metricName: `${options.name}_sum` });
    values.push({ labels: { [options.label]: sum.key }, value: Number(sum.n), metricName: `${options.name}_count` });
  }
  const metric = {
    name: options.name,
    help: options.help,
    type: "histogram",
    aggregator: "sum",
    get: async () => ({ name: options.name, help: options.help, type: "histogram", aggregator: "sum", values }),
  };
  return metric as unknown as Metric;
}

async function readStepDurations(db: Db) {
  // Time in state X = the transition out of X minus the transition into X, per task, in order.
  const bucketRows = await db.$queryRaw<BucketRow[]>`
    with d as (select "fromState"::text as key, extract(epoch from ("createdAt" - lag("createdAt") over (partition by "taskId" order by id)))::float8 as seconds from "TaskTransition")
    select d.key, b.le, count(*) filter (where d.seconds <= b.le) as n
    from d cross join unnest(${STEP_DURATION_BUCKETS}::float8[]) as b(le)
    where d.key is not null and d.seconds is not null group by 1, 2`;
  const sumRows = await db.$queryRaw<SumRow[]>`
    with d as (select "fromState"::text as key, extract(epoch from ("createdAt" - lag("createdAt") over (partition by "taskId" order by id)))::float8 as seconds from "TaskTransition")
    select key, coalesce(sum(seconds), 0)::float8 as total, count(*) as n from d where key is not null and seconds is not null group by 1 order by 1`;
  return { bucketRows, sumRows };
}

async function readRelayLatency(db: Db) {
  const bucketRows = await db.$queryRaw<BucketRow[]>`
    select c.outcome as key, b.le, count(*) filter (where c."durationMs" / 1000.0 <= b.le) as n
    from "RelayCall" c cross join unnest(${RELAY_LATENCY_BUCKETS}::float8[]) as b(le) group by 1, 2`;
  const sumRows = await db.$queryRaw<SumRow[]>`
    select outcome as key, coalesce(sum("durationMs"), 0)::float8 / 1000.0 as total, count(*) as n from "RelayCall" group by 1 order by 1`;
  return { bucketRows, sumRows };
}

export type TMetricsExposition = { contentType: string; body: string };

export async function collectMetrics(deps: {
  db: Db;
  substrateLabel: string;
  now?: () => Date;
}): Promise<TMetricsExposition> {
  const { db } = deps;
  const now = (deps.now ?? (() => new Date()))();
  const registry = new Registry();
  const gauge = <L extends string>(name: string, help: string, labelNames: L[] = []) =>
    new Gauge<L>({ name, help, labelNames, registers: [registry] });

  const [
    tasksByState,
    machinesByState,
    relayCalls,
    stepDurations,
    relayLatency,
    ceilings,
    monthCommitted,
    heartbeat,
    probeRuns,
    latestProbeRun,
    buildRequests,
    capUsage,
  ] = await Promise.all([
    db.task.groupBy({ by: ["state"], where: { probeRunId: null }, _count: { _all: true } }),
    db.guestMachine.groupBy({ by: ["state"], _count: { _all: true } }),
    db.relayCall.groupBy({ by: ["outcome"], _count: { _all: true } }),
    readStepDurations(db),
    readRelayLatency(db),
    readSetting({ db }, { key: "spend.ceilings" }),
    committedInWindow(db, monthWindowOf(now)),
    db.workerHeartbeat.findFirst({ orderBy: { beatAt: "desc" } }),
    db.probeRun.groupBy({ by: ["state"], _count: { _all: true } }),
    db.probeRun.findFirst({
      where: { state: { in: ["passed", "failed"] } },
      orderBy: { createdAt: "desc" },
      include: { results: { select: { probe: true, status: true, durationMs: true } } },
    }),
    db.bundleBuildRequest.groupBy({ by: ["state"], _count: { _all: true } }),
    readMachineCapUsage(db, deps.substrateLabel),
  ]);

  const tasks = gauge("schoolcore_tasks", "Tasks by lifecycle state (probe tasks excluded).", ["state"]);
  for (const state of TASK_STATES) tasks.set({ state }, tasksByState.find((r) => r.state === state)?._count._all ?? 0);

  const machines = gauge("schoolcore_machines", "Guest machines by state (cleanup_quarantined = needs an operator).", [
    "state",
  ]);
  for (const state of MACHINE_STATES)
    machines.set({ state }, machinesByState.find((r) => r.state === state)?._count._all ?? 0);
  const liveStates = ["requested", "created", "started", "ready", "exported"];
  gauge("schoolcore_machines_live", "Guest machines that may exist at the provider and cost money.").set(
    machinesByState.filter((r) => liveStates.includes(r.state)).reduce((n, r) => n + r._count._all, 0),
  );
  gauge("schoolcore_machines_quarantined", "Guest machines in cleanup quarantine.").set(
    machinesByState.find((r) => r.state === "cleanup_quarantined")?._count._all ?? 0,
  );

  // A counter in meaning (calls only accumulate), exposed as one from the durable call log.
  const relayTotal = gauge(
    "schoolcore_relay_calls",
    "Relay calls recorded, by outcome (monotonic: the call log is append-only).",
    ["outcome"],
  );
  for (const row of relayCalls) relayTotal.set({ outcome: row.outcome }, row._count._all);
  registry.registerMetric(
    aggregatedHistogram({
      name: "schoolcore_relay_call_duration_seconds",
      help: "Relay call latency by outcome.",
      label: "outcome",
      buckets: RELAY_LATENCY_BUCKETS,
      ...relayLatency,
    }),
  );
  registry.registerMetric(
    aggregatedHistogram({
      name: "schoolcore_task_step_duration_seconds",
      help: "Time tasks spent in each lifecycle state before leaving it.",
      label: "step",
      buckets: STEP_DURATION_BUCKETS,
      ...stepDurations,
    }),
  );

  gauge(
    "schoolcore_spend_month_committed_micros",
    "Money committed this calendar month (UTC), in micro-units of the provider's currency.",
  ).set(monthCommitted);
  const ceiling = gauge(
    "schoolcore_spend_ceiling_micros",
    "Spend ceilings set by the operator (absent = no ceiling).",
    ["ceiling"],
  );
  ceiling.set({ ceiling: "global" }, ceilings.globalMicros);
  ceiling.set({ ceiling: "per_task" }, ceilings.perTaskMicros);
  if (ceilings.monthlyGlobalMicros !== null) ceiling.set({ ceiling: "monthly_global" }, ceilings.monthlyGlobalMicros);
  if (ceilings.monthlyPerTaskMicros !== null)
    ceiling.set({ ceiling: "monthly_per_task" }, ceilings.monthlyPerTaskMicros);

  // No heartbeat ever: the age is absent (not 0), so an alert on a high age cannot be fooled.
  if (heartbeat) {
    gauge("schoolcore_worker_heartbeat_age_seconds", "Seconds since the newest worker heartbeat was recorded.").set(
      Math.max(0, (now.getTime() - heartbeat.beatAt.getTime()) / 1000),
    );
    gauge("schoolcore_worker_restarts", "Supervisor restarts of the worker behind the newest heartbeat.").set(
      heartbeat.restartCount,
    );
  }

  // The operator's machine cap (lib/machines/machine-slots.ts): slots taken at or over the cap for long = tasks wait.
  const substrate = { substrate: deps.substrateLabel };
  gauge(
    "schoolcore_machine_slots_taken",
    "Machine slots taken: machines in use and tasks holding one for their verifier.",
    ["substrate"],
  ).set(substrate, capUsage.slotsTaken);
  gauge(
    "schoolcore_machines_in_use",
    "Machines in use under the cap (tasks that have or are making one, and other live machines).",
    ["substrate"],
  ).set(substrate, capUsage.machinesInUse);
  if (capUsage.cap !== null)
    gauge("schoolcore_machine_slots_cap", "The operator's cap on concurrent machines (absent = no cap).", [
      "substrate",
    ]).set(substrate, capUsage.cap);

  // queued ones waiting for a machine slot or a worker; a long queue means raise the cap or add workers
  const builds = gauge("schoolcore_bundle_build_requests", "Operators' dependency build requests by state.", ["state"]);
  for (const state of RUN_KINDS["bundle-build"].states)
    builds.set({ state }, buildRequests.find((r) => r.state === state)?._count._all ?? 0);

  const runs = gauge("schoolcore_probe_runs", "Qualification probe runs by state.", ["state"]);
  for (const row of probeRuns) runs.set({ state: row.state }, row._count._all);
  if (latestProbeRun) {
    gauge("schoolcore_probe_latest_run_timestamp_seconds", "When the newest finished probe run was created.").set(
      latestProbeRun.createdAt.getTime() / 1000,
    );
    const result = gauge(
      "schoolcore_probe_latest_result",
      "1 for each probe's status in the newest finished probe run.",
      ["probe", "status"],
    );
    for (const r of latestProbeRun.results) result.set({ probe: r.probe, status: r.status }, 1);
  }

  return { contentType: registry.contentType, body: await registry.metrics() };
}
