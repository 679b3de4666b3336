/**
 * The disposable world P1, P4 and P5 run tasks in: a target repository the probe creates itself
 * (the demo calculator, written fresh under DATA_DIR/probe-targets/<run>), and tasks on it that
 * carry the run id — so the worker's sweep never dispatches them and operator lists hide them —
 * with a student command the probe fixes (never the operator's agent, never a real model).
 */
import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { recordAudit } from "../audit";
import type { TTaskLimits } from "../contract/limits";
import type { Db } from "../db/client";
import { writeDemoRepository, DEMO_ISSUE } from "../demo/demo-target";
import type { TEnv } from "../env";
import { resolveBaseRef, syncMirror } from "../repos/mirror";
import { readSetting } from "../settings/operator-settings";

export type TProbeTarget = { repositoryId: string; name: string; baseSha: string; dir: string };

/** Writes the run's target afresh and mirrors it (a run asks once, through `TProbeRunContext.probeTarget`). */
export async function createProbeTarget(deps: { db: Db; env: TEnv }, input: { runId: string }): Promise<TProbeTarget> {
  const dir = path.join(deps.env.dataDir, "probe-targets", input.runId);
  await fs.rm(dir, { recursive: true, force: true });
  const demo = await writeDemoRepository(dir);
  const name = `probe/run-${input.runId.slice(0, 8)}`;
  const repo = await deps.db.targetRepository.upsert({
    where: { name },
    create: { name, cloneUrl: demo.path, probeRunId: input.runId },
    update: { cloneUrl: demo.path, probeRunId: input.runId },
  });
  const mirror = await syncMirror({
    db: deps.db,
    dataDir: deps.env.dataDir,
    repository: name,
    source: { cloneUrl: demo.path },
  });
  const baseSha = await resolveBaseRef(mirror, "main");
  return { repositoryId: repo.id, name, baseSha, dir };
}

export async function removeProbeTargetFiles(env: TEnv, runId: string): Promise<void> {
  await fs.rm(path.join(env.dataDir, "probe-targets", runId), { recursive: true, force: true });
}

/** A queued probe task on the probe's own target, with its own command, limits and (optionally) an earlier deadline. */
export async function createProbeTask(
  deps: { db: Db },
  input: {
    runId: string;
    target: TProbeTarget;
    label: string;
    agentCommand: string[];
    limits?: Partial<TTaskLimits>;
    deadlineSeconds?: number;
  },
) {
  const base = await readSetting(deps, { key: "task.limits" });
  const limits = { ...base, relayChannel: "mailbox" as const, ...input.limits };
  const operationId = randomUUID();
  return deps.db.$transaction(async (tx) => {
    const task = await tx.task.create({
      data: {
        repositoryId: input.target.repositoryId,
        issueNumber: DEMO_ISSUE.number,
        issueTitle: `[probe ${input.label}] ${DEMO_ISSUE.title}`,
        prompt: DEMO_ISSUE.body,
        baseRef: "main",
        baseSha: input.target.baseSha,
        operationId,
        limits,
        relayChannel: limits.relayChannel,
        probeRunId: input.runId,
        agentCommand: input.agentCommand,
        deadlineAt: input.deadlineSeconds ? new Date(Date.now() + input.deadlineSeconds * 1000) : null,
      },
    });
    await tx.taskTransition.create({
      data: {
        taskId: task.id,
        fromState: null,
        toState: "queued",
        operationId,
        attempt: 0,
        reason: `created by qualification probe ${input.label}`,
      },
    });
    await recordAudit(tx, {
      actorId: null,
      action: "task.create",
      targetType: "task",
      targetId: task.id,
      detail: { probeRunId: input.runId, label: input.label },
    });
    return task;
  });
}

export const PROBE_FIX_COMMAND = [
  "sh",
  "-c",
  "sed -i 's/a - b/a + b/' src/add.js && printf '{\"summary\":\"probe fix\"}' > /tmp/school-core-output/student-report.json",
];
