"use server";
import { revalidatePath } from "next/cache";
import { withActorAction } from "@/app/_server/action";
import { getRunContext } from "@/app/_server/run-context";
import { cancelTask, ZCancelTaskSchema } from "@/lib/lifecycle/cancel-task";
import { createTask, ZCreateTaskSchema } from "@/lib/tasks/create-task";
import { createAttemptGroup, ZCreateAttemptGroupSchema } from "@/lib/attempts/create-attempt-group";
import { reverifyTask, ZReverifyTaskSchema } from "@/lib/verify/reverify-task";
import { retryTask, ZRetryTaskSchema } from "@/lib/lifecycle/retry-task";

export const createTaskAction = withActorAction({
  action: "task.create",
  schema: ZCreateTaskSchema,
  handler: async ({ actor, input }) => {
    const { db, env } = await getRunContext();
    const task = await createTask({ db, env }, { ...input, actor });
    return { ok: true, message: `Task created (${task.state}).`, id: task.id };
  },
});

export const createAttemptsAction = withActorAction({
  action: "task.create",
  schema: ZCreateAttemptGroupSchema,
  handler: async ({ actor, input }) => {
    const { db, env } = await getRunContext();
    const { group, tasks } = await createAttemptGroup({ db, env }, { ...input, actor });
    return { ok: true, message: `${tasks.length} attempts created (group ${group.id.slice(0, 8)}).`, id: tasks[0]!.id };
  },
});

export const cancelTaskAction = withActorAction({
  action: "task.cancel",
  schema: ZCancelTaskSchema,
  handler: async ({ actor, input }) => {
    await cancelTask(await getRunContext(), { ...input, actor });
    revalidatePath(`/operator/tasks/${input.taskId}`);
    return { ok: true, message: "Task cancelled: its relay is revoked and its guests destroyed." };
  },
});

export const reverifyTaskAction = withActorAction({
  action: "task.reverify",
  schema: ZReverifyTaskSchema,
  handler: async ({ actor, input }) => {
    const { db } = await getRunContext();
    await reverifyTask({ db }, { ...input, actor });
    revalidatePath(`/operator/tasks/${input.taskId}`);
    return {
      ok: true,
      message: `Re-verification scheduled: the trusted checks run again on a fresh verifier guest${input.dependencies === "candidate" ? ", with the candidate's own dependencies," : ""} as soon as a machine is free.`,
    };
  },
});

export const retryTaskAction = withActorAction({
  action: "task.retry",
  schema: ZRetryTaskSchema,
  handler: async ({ actor, input }) => {
    const { db } = await getRunContext();
    const outcome = await retryTask({ db }, { ...input, actor });
    revalidatePath(`/operator/tasks/${input.taskId}`);
    return { ok: true, message: `Attempt ${outcome.attempt} started from ${outcome.to}.` };
  },
});
