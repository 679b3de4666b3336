"use server";
import { revalidatePath } from "next/cache";
import type { z } from "zod";
import { getActor } from "@/app/_server/actor";
import { can, type Actor } from "@/lib/auth/permissions";
import { getDb } from "@/lib/db/client";
import { isAppError, userMessageOf } from "@/lib/errors";
import { logError } from "@/lib/log";
import { markPublicationFailed, ZMarkPublicationFailedSchema } from "@/lib/publish/mark-publication-failed";
import { retryPublication, ZRetryPublicationSchema } from "@/lib/publish/retry-publication";

export type TPublicationActionState = { ok: true; message: string } | { ok: false; error: string } | null;

/** Actor, permission, zod parse, one use case, typed error → bounded message. */
async function runAction<S extends z.ZodType>(schema: S, formData: FormData, body: (actor: Actor, input: z.infer<S>) => Promise<string>): Promise<TPublicationActionState> {
  try {
    const actor = await getActor();
    if (!actor || !can(actor, "publish.manage")) return { ok: false, error: "Not found." };
    const parsed = schema.safeParse({ taskId: formData.get("taskId"), ...(formData.has("reason") ? { reason: formData.get("reason") } : {}) });
    if (!parsed.success) return { ok: false, error: parsed.error.issues[0]?.message ?? "Invalid input." };
    const message = await body(actor, parsed.data);
    revalidatePath("/operator/publications");
    return { ok: true, message };
  } catch (error) {
    if (isAppError(error)) return { ok: false, error: error.message };
    logError("publication action failed", error);
    return { ok: false, error: userMessageOf(error) };
  }
}

export async function retryPublicationAction(_previous: TPublicationActionState, formData: FormData): Promise<TPublicationActionState> {
  return runAction(ZRetryPublicationSchema, formData, async (actor, input) => {
    const result = await retryPublication({ db: await getDb(), actor, taskId: input.taskId, reason: input.reason || undefined });
    return `Retry queued (was ${result.from}); the next attempt reconciles with the provider before it creates anything.`;
  });
}

export async function markPublicationFailedAction(_previous: TPublicationActionState, formData: FormData): Promise<TPublicationActionState> {
  return runAction(ZMarkPublicationFailedSchema, formData, async (actor, input) => {
    await markPublicationFailed({ db: await getDb(), actor, taskId: input.taskId, reason: input.reason });
    return "Publication marked failed.";
  });
}
