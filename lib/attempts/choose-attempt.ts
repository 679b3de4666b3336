/**
 * Approving one attempt ends the others (issue 26). Runs inside the approval's transaction, after
 * the group row is locked: the group's chosen attempt is set by compare-and-set (null → this
 * task), so of two approvals racing on two attempts of one group exactly one wins and the other is
 * STATE_CONFLICT; every other attempt not yet approved or published moves to `not_chosen` through
 * the task transition kernel with the approval's operation id, each with an audit row naming the
 * approver. Their guests and capabilities are released after commit (release-not-chosen-attempts.ts).
 */
import { randomUUID } from "node:crypto";
import { recordAudit } from "../audit";
import type { Actor } from "../contract/actor";
import type { DbTx } from "../db/client";
import type { TaskState } from "../db/generated/enums";
import { AppError } from "../errors";
import { canTransitionTask } from "../tasks/task-states";
import { transitionTaskIn } from "../tasks/transition-task";

/**
 * Serialises every decision within one group. Taken before the decided task's own row lock, so
 * two approvals of two attempts never hold one task each while waiting for the other (a deadlock).
 * Returns the group as it is once locked.
 */
export async function lockAttemptGroupIn(tx: DbTx, groupId: string) {
  await tx.$queryRaw`select id from "AttemptGroup" where id = ${groupId}::uuid for update`;
  return tx.attemptGroup.findUniqueOrThrow({ where: { id: groupId } });
}

/** Refuses any decision on an attempt of a group whose winner is another attempt. */
export function refuseDecidedGroup(group: { chosenTaskId: string | null }, taskId: string) {
  if (group.chosenTaskId !== null && group.chosenTaskId !== taskId)
    throw new AppError(
      "STATE_CONFLICT",
      "Another attempt of this issue was approved first: this attempt was not chosen, and no decision on it is possible any more.",
      { chosenTaskId: group.chosenTaskId },
    );
}

export async function chooseAttemptIn(
  tx: DbTx,
  input: { groupId: string; taskId: string; actor: Actor },
): Promise<{ notChosenTaskIds: string[] }> {
  const { groupId, taskId, actor } = input;
  const chosenAt = new Date();
  const updated = await tx.attemptGroup.updateMany({
    where: { id: groupId, chosenTaskId: null },
    data: { chosenTaskId: taskId, chosenById: actor.userId, chosenAt },
  });
  if (updated.count !== 1)
    throw new AppError(
      "STATE_CONFLICT",
      "Another attempt of this issue was approved first: only one attempt of a group can be approved.",
    );
  const others = await tx.task.findMany({
    where: { attemptGroupId: groupId, id: { not: taskId } },
    orderBy: { id: "asc" },
    select: { id: true },
  });
  // Locked in id order (the worker's own transitions are single short transactions that wait).
  if (others.length > 0)
    await tx.$queryRaw`select id from "Task" where id = any(${others.map((o) => o.id)}::uuid[]) order by id for update`;
  const operationId = randomUUID();
  const notChosenTaskIds: string[] = [];
  for (const other of others) {
    const { state } = await tx.task.findUniqueOrThrow({ where: { id: other.id }, select: { state: true } });
    if (!canTransitionTask(state as TaskState, "not_chosen")) continue;
    await transitionTaskIn(tx, {
      taskId: other.id,
      from: state as TaskState,
      to: "not_chosen",
      operationId,
      reason: `not chosen: attempt ${taskId} was approved by ${actor.email}`,
    });
    await recordAudit(tx, {
      actorId: actor.userId,
      action: "attempt.not_chosen",
      targetType: "task",
      targetId: other.id,
      detail: { attemptGroupId: groupId, chosenTaskId: taskId, from: state, operationId },
    });
    notChosenTaskIds.push(other.id);
  }
  await recordAudit(tx, {
    actorId: actor.userId,
    action: "attempt.choose",
    targetType: "attempt_group",
    targetId: groupId,
    detail: { chosenTaskId: taskId, notChosenTaskIds, operationId },
  });
  return { notChosenTaskIds };
}
