/**
 * changes_requested → queued (issue 14): a teacher's "Request changes" closed round N; this starts
 * round N + 1 as a new lifecycle operation. One compare-and-set transaction moves the state, bumps
 * the round, takes a new operation id (so the next student guest, relay capability and verifier
 * are new ones) and clears what belonged to the closed round's run (its deadline, its guest
 * report). A worker killed before the commit finds the task still changes_requested and does
 * it now; one killed after finds it queued in round N + 1: a round never starts twice.
 */
import { randomUUID } from "node:crypto";
import type { Task } from "../db/generated/client";
import { AppError } from "../errors";
import { readSetting } from "../settings/operator-settings";
import { crashIfRequested } from "../tasks/crash-points";
import { notifyWorkReady } from "../db/work-ready";
import type { TaskRunContext } from "../tasks/task-run-context";
import { transitionTaskIn } from "../tasks/transition-task";

export async function queueNextRound(ctx: TaskRunContext, task: Task): Promise<void> {
  const nextRound = task.round + 1;
  await ctx.db.$transaction(async (tx) => {
    const closed = await tx.candidate.findUnique({
      where: { taskId_round: { taskId: task.id, round: task.round } },
      include: { decisions: true },
    });
    // Fail closed: only a recorded "Request changes" on this round's candidate opens another round.
    if (!closed?.decisions.some((d) => d.verdict === "request_changes")) {
      throw new AppError(
        "STATE_CONFLICT",
        `Round ${task.round} has no "Request changes" decision; no further round is started.`,
      );
    }
    // The limit was checked when the teacher asked; re-checked here in case the operator lowered it since.
    const { maxRounds } = await readSetting({ db: tx }, { key: "review.rounds" });
    if (nextRound > maxRounds)
      throw new AppError(
        "REVIEW_ROUND_LIMIT",
        `The task already had ${task.round} of at most ${maxRounds} review rounds.`,
      );
    await transitionTaskIn(tx, {
      taskId: task.id,
      from: "changes_requested",
      to: "queued",
      operationId: randomUUID(),
      reason: `round ${nextRound} queued after changes were requested in round ${task.round}`,
    });
    await tx.task.update({ where: { id: task.id }, data: { round: nextRound, deadlineAt: null } });
    // The new round dispatches at once: delivered only if this transaction commits.
    await notifyWorkReady(tx, { kind: "task", id: task.id });
  });
  crashIfRequested("round:queued");
}
