/**
 * P4 guest failure, zero host fallback (seed 000 items 2 and 6): a guest whose agent dies, one
 * that times out, and one whose relay fails each end `failed`/`blocked` with a visible reason and
 * no candidate — and while they run, the control plane starts no process on the host except the
 * allow-listed trusted binaries (git, sha256sum). Counted by the host itself (host-processes.ts).
 */
import { AppError } from "../errors";
import type { TRelayTransport } from "../relay/transports/transport";
import { ALLOWED_HOST_BINARIES, createHostProcessWatch, isAllowedHostBinary } from "./host-processes";
import { createProbeTask } from "./probe-tasks";
import { defineProbe, outcome } from "./probe-types";

function injectedOutage(): AppError {
  return new AppError(
    "RELAY_UPSTREAM_FAILED",
    "The model upstream failed (probe P4: injected outage). The task is blocked; there is no fallback.",
    { reason: "connection_failed" },
  );
}

/** The relay-failure case: an upstream that always fails (what a real outage looks like to the relay), for either operation. */
const FAILING_UPSTREAM: TRelayTransport = {
  kind: "scripted",
  async complete() {
    throw injectedOutage();
  },
  async chat() {
    throw injectedOutage();
  },
};

export const noHostFallbackProbe = defineProbe({
  id: "P4",
  title: "Guest failure, zero host fallback",
  timeCapMs: 180_000,
  run: async (deps, run) => {
    const target = await run.probeTarget();
    const cases = [
      { label: "P4 agent dies", agentCommand: ["sh", "-c", "kill -9 $$"], deadlineSeconds: 60 },
      { label: "P4 agent times out", agentCommand: ["sleep", "600"], deadlineSeconds: 8 },
      {
        label: "P4 relay fails",
        agentCommand: ["node", "/tmp/school-core-input/student-agent.mjs"],
        deadlineSeconds: 60,
        relayTransport: FAILING_UPSTREAM,
      },
    ];
    const watch = createHostProcessWatch({ isProviderSpawn: deps.isProviderSpawn });
    watch.start();
    let spawns: ReturnType<typeof watch.stop> = [];
    const tasks: { label: string; taskId: string }[] = [];
    try {
      for (const c of cases)
        tasks.push({
          label: c.label,
          taskId: (
            await createProbeTask(deps, {
              runId: run.runId,
              target,
              label: c.label,
              agentCommand: c.agentCommand,
              deadlineSeconds: c.deadlineSeconds,
            })
          ).id,
        });
      await Promise.all(cases.map((c, i) => deps.runProbeTask(tasks[i]!.taskId, { relayTransport: c.relayTransport })));
    } finally {
      spawns = watch.stop();
    }
    const problems: string[] = [];
    const results = [];
    for (const { label, taskId } of tasks) {
      const task = await deps.db.task.findUniqueOrThrow({
        where: { id: taskId },
        include: { candidates: true, machines: true },
      });
      results.push({
        label,
        state: task.state,
        errorCode: task.errorCode,
        reason: task.errorSummary?.slice(0, 300) ?? null,
        candidates: task.candidates.length,
        machines: task.machines.map((m) => m.state),
      });
      if (task.state !== "failed" && task.state !== "blocked")
        problems.push(`${label}: ended ${task.state}, not failed/blocked`);
      if (!task.errorSummary) problems.push(`${label}: no visible reason`);
      if (task.candidates.length > 0) problems.push(`${label}: a candidate was imported`);
    }
    const foreign = spawns.filter((s) => !isAllowedHostBinary(s.file));
    for (const s of foreign) problems.push(`host process started during the probe: ${s.file} (${s.via})`);
    return outcome(problems.length === 0, {
      tasks: results,
      hostProcesses: {
        total: spawns.length,
        allowed: spawns.length - foreign.length,
        foreign: foreign.map((s) => s.file).slice(0, 20),
        allowList: [...ALLOWED_HOST_BINARIES],
      },
      ...(problems.length ? { problems: problems.slice(0, 50) } : {}),
    });
  },
});
