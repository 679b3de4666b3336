"use server";
import { z } from "zod";
import { withActorAction } from "@/app/_server/action";
import { getRunContext } from "@/app/_server/run-context";
import { cancelTask } from "@/lib/lifecycle/cancel-task";
import { createTask, ZCreateTaskSchema } from "@/lib/lifecycle/create-task";

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
    return { ok: true, message: "Task cancelled: its relay is revoked and its guests destroyed." };
  },
});
