/**
 * P1 lifecycle (seed 000 item 1): create → start → ready → upload → execute → bounded export →
 * clean candidate import → trusted verification on a separate guest → destroy, on a disposable
 * target the probe creates itself, through the real lifecycle steps. Destruction is observed at
 * the provider (get and list). Records image, configuration digest, machine ids, candidate id and
 * head, manifest digest and check results. The task is then closed (rejected): nothing publishes.
 */
import { transitionTask } from "../tasks/transition-task";
import { observeMachinesGone } from "./observe-gone";
import { createProbeTask, PROBE_FIX_COMMAND } from "./probe-tasks";
import { defineProbe, outcome } from "./probe-types";

export const lifecycleProbe = defineProbe({
  id: "P1",
  title: "Lifecycle on a disposable target",
  timeCapMs: 180_000,
  run: async (deps, run) => {
    const { db } = deps;
    const target = await run.probeTarget();
    const task = await createProbeTask(deps, {
      runId: run.runId,
      target,
      label: "P1",
      agentCommand: PROBE_FIX_COMMAND,
      limits: { wallClockSeconds: 120 },
    });
    await deps.runProbeTask(task.id);
    const after = await db.task.findUniqueOrThrow({
      where: { id: task.id },
      include: { machines: true, candidates: true, evidence: true, transitions: { orderBy: { id: "asc" } } },
    });
    if (after.state === "review_pending")
      await transitionTask(db, {
        taskId: task.id,
        from: "review_pending",
        to: "rejected",
        reason: "qualification probe P1 finished; nothing is published",
      });
    const student = after.machines.find((m) => m.purpose === "student");
    const verifier = after.machines.find((m) => m.purpose === "verifier");
    const candidate = after.candidates[0];
    const evidence = after.evidence[0];
    const providerIds = after.machines.map((m) => m.providerId).filter((id): id is string => Boolean(id));
    const gone = await observeMachinesGone(deps.substrate, providerIds);
    const checks = Array.isArray(evidence?.checks)
      ? (evidence!.checks as { name?: string; status?: string; exitCode?: number | null }[]).map((c) => ({
          name: c.name,
          status: c.status,
          exitCode: c.exitCode,
        }))
      : [];
    const failures: string[] = [];
    if (after.state !== "review_pending")
      failures.push(
        `the task ended ${after.state} (${after.errorCode ?? "no code"}: ${after.errorSummary ?? ""}) instead of reaching review`,
      );
    if (!student || !verifier) failures.push("a student and a separate verifier guest were not both used");
    if (student && verifier && student.providerId === verifier.providerId)
      failures.push("verification ran on the student's guest");
    if (!candidate) failures.push("no candidate was imported");
    if (!evidence?.isPass) failures.push("trusted verification did not pass");
    if (!after.machines.every((m) => m.state === "destroyed"))
      failures.push(`machines not destroyed: ${after.machines.map((m) => `${m.purpose}=${m.state}`).join(", ")}`);
    if (!gone.isGone)
      failures.push(`the provider still knows machines: ${[...gone.stillListed, ...gone.stillGettable].join(", ")}`);
    return outcome(failures.length === 0, {
      target: target.name,
      taskId: task.id,
      configDigest: run.configDigest,
      image: student?.imageRef ?? null,
      verifierImage: verifier?.imageRef ?? null,
      machines: after.machines.map((m) => ({ purpose: m.purpose, providerId: m.providerId, state: m.state })),
      candidate: candidate
        ? {
            id: candidate.id,
            headSha: candidate.headSha,
            baseSha: candidate.baseSha,
            diffDigest: (candidate as { diffDigest?: string }).diffDigest ?? null,
          }
        : null,
      manifestDigest: evidence?.manifestDigest ?? null,
      checks,
      transitions: after.transitions.map((t) => t.toState),
      observedGone: gone,
      ...(failures.length ? { failures } : {}),
    });
  },
});
