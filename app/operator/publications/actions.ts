"use server";
import { revalidatePath } from "next/cache";
import { withActorAction } from "@/app/_server/action";
import { getDb } from "@/lib/db/client";
import { markPublicationFailed, ZMarkPublicationFailedSchema } from "@/lib/publish/mark-publication-failed";
import { retryPublication, ZRetryPublicationSchema } from "@/lib/publish/retry-publication";

export const retryPublicationAction = withActorAction({
  action: "publish.manage",
  schema: ZRetryPublicationSchema,
  handler: async ({ actor, input }) => {
    const result = await retryPublication(
      { db: await getDb() },
      { ...input, reason: input.reason || undefined, actor },
    );
    revalidatePath("/operator/publications");
    return {
      ok: true,
      message: `Retry queued (was ${result.from}); the next attempt reconciles with the provider before it creates anything.`,
    };
  },
});

export const markPublicationFailedAction = withActorAction({
  action: "publish.manage",
  schema: ZMarkPublicationFailedSchema,
  handler: async ({ actor, input }) => {
    await markPublicationFailed({ db: await getDb() }, { ...input, actor });
    revalidatePath("/operator/publications");
    return { ok: true, message: "Publication marked failed." };
  },
});
