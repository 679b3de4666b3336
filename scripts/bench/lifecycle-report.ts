/**
 * What the lifecycle bench prints: the human table (per worker count, then the stage table, the
 * first-command figure and the floors) on stdout, then the same figures as BENCH_JSON rows, each
 * beside its floor or peer and, where issue 29 sets one, its target (npm run bench collects them).
 */
import os from "node:os";
import { printBenchJson, row, type TBenchRow } from "./bench-report";
import type { TFirstCommand } from "./first-command";
import type { TPhase } from "./lifecycle-phase";
import type { TStageFloors } from "./stage-floors";

export type TLifecycleReport = {
  phases: TPhase[];
  /** the run's shape, for the headline and the rows' labels */
  tasks: number;
  isSequential: boolean;
  /** PostgreSQL's server_version */
  version: string | undefined;
  firstCommand: TFirstCommand;
  floors: TStageFloors;
};

export function printLifecycleReport(report: TLifecycleReport): void {
  const { phases, tasks: taskCount, isSequential, version, firstCommand, floors } = report;
  const f = (n: number, digits = 1) => (Number.isFinite(n) ? n.toFixed(digits) : "—");
  const header = [
    "workers",
    "tasks/min",
    "p50 to review",
    "p95 to review",
    "p50 in guests",
    "approve→PR p50",
    "approve→PR p95",
    "CPU/task",
    "errors",
    "machines left",
    "wall",
  ];
  const lines = [
    `lifecycle benchmark — ${taskCount} demo tasks ${isSequential ? "one after the other (after one warm-up task, not counted)" : "at once"} on the local substrate (bubblewrap guests), PostgreSQL ${version} (${process.env.DATABASE_URL ? "DATABASE_URL" : "embedded"}), Node ${process.version}, ${os.cpus().length} cores, load ${os
      .loadavg()
      .map((l) => l.toFixed(1))
      .join(" ")}`,
    "",
    header.map((h) => h.padStart(15)).join(""),
    ...phases.map((p) =>
      [
        String(p.workers),
        f(p.tasksPerMinute),
        `${f(p.reviewP50)} s`,
        `${f(p.reviewP95)} s`,
        `${f(p.guestP50)} s`,
        `${f(p.approveP50, 2)} s`,
        `${f(p.approveP95, 2)} s`,
        `${f(p.cpuPerTask, 2)} s`,
        String(p.errors),
        String(p.machinesLeft),
        `${f(p.wallSeconds, 0)} s${p.timedOut ? " (timed out)" : ""}`,
      ]
        .map((c) => c.padStart(15))
        .join(""),
    ),
    "",
    "stage table (seconds in each state, p50 / p95, tasks that reached review):",
    ...phases.map(
      (p) =>
        `  ${p.workers} worker${p.workers === 1 ? " " : "s"}  ` +
        p.stages.map((st) => `${st.state} ${f(st.p50, 2)} / ${f(st.p95, 2)}`).join("   "),
    ),
    `machine create → first command output (SmolCloud adapter on the local substrate, ${firstCommand.samples} machines one at a time): p50 ${f(firstCommand.p50Ms, 0)} ms, p95 ${f(firstCommand.p95Ms, 0)} ms`,
    `floors (p50, this machine, same run): bubblewrap spawn of true ${f(floors.bwrapTrueMs, 1)} ms; node start-up ${f(floors.nodeStartMs, 1)} ms; node --test of the demo repository ${f(floors.demoTestsMs, 0)} ms`,
    "",
    "p50 in guests: the floor — time the student guest and the verifier guest ran (from the transition log); the rest of the time to review is queueing and the control plane.",
    "CPU/task: user + system seconds of the worker processes and every process below them (the process launcher and the git it ran), per task; the local substrate and its guests (the provider) and PostgreSQL are not counted.",
    ...phases.map(
      (p) =>
        `  CPU/task, ${p.workers} worker${p.workers === 1 ? "" : "s"}: the worker process ${f(p.cpuSplitPerTask.root, 3)} s + its process launcher ${f(p.cpuSplitPerTask.helpers, 3)} s + the git and sha256sum processes it started ${f(p.cpuSplitPerTask.ended, 3)} s (those alone are the floor of this pipeline's git work)`,
    ),
    ...phases.flatMap((p) =>
      p.errorSamples.map((s) => `errors (${p.workers} worker${p.workers === 1 ? "" : "s"}): ${s}`),
    ),
  ];
  process.stdout.write(lines.join("\n") + "\n");

  const rows: TBenchRow[] = [
    row(
      "machine create → first command output p50 (local substrate)",
      firstCommand.p50Ms,
      "ms",
      { label: "bubblewrap spawn of true (floor)", value: floors.bwrapTrueMs },
      "≤ 150 ms",
    ),
    row("machine create → first command output p95 (local substrate)", firstCommand.p95Ms, "ms", {
      label: "bubblewrap spawn of true (floor)",
      value: floors.bwrapTrueMs,
    }),
  ];
  const mode = isSequential ? "one at a time" : `${taskCount} at once`;
  const base = phases[0];
  for (const p of phases) {
    const label = `${p.workers} worker${p.workers === 1 ? "" : "s"}`;
    const peer =
      p === base || !base
        ? null
        : { label: `${base.workers} worker${base.workers === 1 ? "" : "s"}`, value: base.tasksPerMinute };
    rows.push(row(`lifecycle ${label}: tasks per minute (${mode})`, p.tasksPerMinute, "tasks/min", peer));
    rows.push(
      row(
        `lifecycle ${label}: p50 creation → review (${mode})`,
        p.reviewP50,
        "s",
        { label: "p50 time in guests (floor)", value: p.guestP50 },
        // the targets are for one demo task with nothing else running; 50 at once queue behind the machine cap
        isSequential ? "≤ 3.0 s" : undefined,
      ),
    );
    rows.push(
      row(
        `lifecycle ${label}: p95 creation → review (${mode})`,
        p.reviewP95,
        "s",
        { label: "p50 time in guests (floor)", value: p.guestP50 },
        isSequential ? "≤ 4.5 s" : undefined,
      ),
    );
    rows.push(
      row(`lifecycle ${label}: p50 approve → pull request open (one at a time)`, p.approveP50, "s", null, "≤ 1.0 s"),
    );
    rows.push(row(`lifecycle ${label}: p95 approve → pull request open (one at a time)`, p.approveP95, "s"));
    rows.push(
      row(
        `lifecycle ${label}: control-plane CPU per task`,
        p.cpuPerTask,
        "s",
        { label: "the git and sha256sum processes of a task alone (floor)", value: p.cpuSplitPerTask.ended },
        "≤ 0.15 s",
      ),
    );
    rows.push(row(`lifecycle ${label}: CPU per task, the worker process itself`, p.cpuSplitPerTask.root, "s"));
    rows.push(row(`lifecycle ${label}: CPU per task, the process launcher`, p.cpuSplitPerTask.helpers, "s"));
    for (const st of p.stages) {
      const floor =
        st.state === "running"
          ? {
              label: "node start-up + node --test of the demo (floor)",
              value: (floors.nodeStartMs + floors.demoTestsMs) / 1000,
            }
          : st.state === "verifying"
            ? { label: "node --test of the demo, run directly (floor)", value: floors.demoTestsMs / 1000 }
            : st.state === "provisioning"
              ? { label: "bubblewrap spawn of true (floor)", value: floors.bwrapTrueMs / 1000 }
              : null;
      rows.push(row(`lifecycle ${label}: stage ${st.state} p50`, st.p50, "s", floor));
      rows.push(row(`lifecycle ${label}: stage ${st.state} p95`, st.p95, "s", floor));
    }
    rows.push(row(`lifecycle ${label}: errors`, p.errors, "tasks", null, "0"));
    rows.push(row(`lifecycle ${label}: machines left`, p.machinesLeft, "machines", null, "0"));
  }
  printBenchJson({ bench: "lifecycle", ok: phases.every((p) => !p.timedOut), rows, notes: [`PostgreSQL ${version}`] });
}
