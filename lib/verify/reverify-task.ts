/**
 * An operator re-runs the trusted checks (after a manifest change, to double-check, or with the
 * candidate's own dependencies — a bundle built from its lockfile, a second audited decision): the task
 * goes back to `imported`, and a worker — told in the same transaction — starts the checks on a
 * fresh verifier guest as soon as a machine is free (at the machine cap it waits there, ahead of
 * new tasks: lib/machines/machine-slots.ts). The old evidence stays (immutable) but no review page
 * built on it can decide any more. Its own permission (`task.reverify`): it invalidates a
 * teacher's open review, which is not what editing the manifest is about.
 */
import { z } from "zod";
import { recordAudit } from "../audit";
import { can } from "../auth/permissions";
import type { Actor } from "../contract/actor";
import type { Db, DbTx } from "../db/client";
import { AppError } from "../errors";
import { notifyWorkReady } from "../db/work-ready";
import { findCandidateOwnBundle } from "../dependencies/verification-dependencies";
import { parseOrThrow } from "../parse-or-throw";
import { transitionTaskIn } from "../tasks/transition-task";

export const ZReverifyTaskSchema = z
  .object({
    taskId: z.uuid(),
    /** the base commit's bundle (default), or the one an operator built from the candidate's own lockfile */
    dependencies: z.enum(["base", "candidate"]).default("base"),
  })
  .strict();

export async function reverifyTask(
  deps: { db: Db },
  { actor, ...fields }: z.input<typeof ZReverifyTaskSchema> & { actor: Actor },
) {
  // Not allowed to re-verify = not allowed to know the task is there.
  if (!can(actor, "task.reverify")) throw new AppError("NOT_FOUND", "No such task.");
  const input = parseOrThrow(ZReverifyTaskSchema, fields, { code: "VALIDATION_FAILED", label: "re-verification" });
  return deps.db.$transaction(async (tx) => {
    const task = await tx.task.findUnique({ where: { id: input.taskId } });
    if (!task) throw new AppError("NOT_FOUND", "No such task.");
    if (task.state !== "review_pending")
      throw new AppError(
        "STATE_CONFLICT",
        `Only a task waiting for review can be re-verified (this one is ${task.state}).`,
      );
    const verifyBundleId = input.dependencies === "candidate" ? await candidateBundleIdIn(tx, task) : null;
    await tx.task.update({ where: { id: task.id }, data: { verifyBundleId } });
    await transitionTaskIn(tx, {
      taskId: task.id,
      from: "review_pending",
      to: "imported",
      reason:
        verifyBundleId === null
          ? "re-verification requested by an operator"
          : "re-verification requested by an operator, with the candidate's own dependencies",
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: "task.reverify",
      targetType: "task",
      targetId: task.id,
      detail: { dependencies: input.dependencies, bundleId: verifyBundleId },
    });
    await notifyWorkReady(tx, { kind: "task", id: task.id });
  });
}

/** The bundle built from the current round's candidate's own lockfile; refused when there is none. */
async function candidateBundleIdIn(tx: DbTx, task: { id: string; round: number }): Promise<string> {
  const candidate = await tx.candidate.findUnique({
    where: { taskId_round: { taskId: task.id, round: task.round } },
    select: { id: true },
  });
  const bundle = candidate ? await findCandidateOwnBundle(tx, candidate.id) : null;
  if (!bundle)
    throw new AppError(
      "VALIDATION_FAILED",
      "No bundle has been built from this candidate's lockfile: build one first (the repository's dependencies page, \"Build from the candidate's lockfile\"), then re-verify with it.",
    );
  return bundle.id;
}
