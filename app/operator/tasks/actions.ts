"use server";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { withActorAction } from "@/app/_server/action";
import { getRunContext } from "@/app/_server/run-context";
import { cancelTask } from "@/lib/lifecycle/cancel-task";
import { createTask, ZCreateTaskSchema } from "@/lib/tasks/create-task";
import { reverifyTask } from "@/lib/verify/reverify-task";

export const createTaskAction = withActorAction({
  action: "task.create",
  schema: ZCreateTaskSchema,
  handler: async ({ actor, input }) => {
    const ctx = await getRunContext();
    const task = await createTask({ db: ctx.db, env: ctx.env, input, actorId: actor.userId });
    return { ok: true, message: `Task created (${task.state}).`, id: task.id };
  },
});

export const cancelTaskAction = withActorAction({
  action: "task.cancel",
  schema: z.object({ taskId: z.uuid() }),
  handler: async ({ actor, input }) => {
    await cancelTask(await getRunContext(), { taskId: input.taskId, actorId: actor.userId, actorEmail: actor.email });
    revalidatePath(`/operator/tasks/${input.taskId}`);
    return { ok: true, message: "Task cancelled: its relay is revoked and its guests destroyed." };
  },
});

export const reverifyTaskAction = withActorAction({
  action: "manifest.edit",
  schema: z.object({ taskId: z.uuid() }),
  handler: async ({ actor, input }) => {
    await reverifyTask({ db: (await getRunContext()).db, taskId: input.taskId, actorId: actor.userId });
    revalidatePath(`/operator/tasks/${input.taskId}`);
    return { ok: true, message: "Re-verification scheduled: the trusted checks run again on a fresh verifier guest." };
  },
});
