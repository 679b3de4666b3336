"use server";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { withActorAction } from "@/app/_server/action";
import { getDb } from "@/lib/db/client";
import { saveTrustedManifest } from "@/lib/verify/trusted-manifests";

export const saveManifestAction = withActorAction({
  action: "manifest.edit",
  schema: z.object({ content: z.string().min(2).max(100_000) }),
  handler: async ({ actor, input }) => {
    let content: unknown;
    try {
      content = JSON.parse(input.content);
    } catch {
      return { ok: false, error: "The manifest is not valid JSON." };
    }
    const saved = await saveTrustedManifest({ db: await getDb() }, { content, actor });
    revalidatePath("/operator/manifest");
    return {
      ok: true,
      message: `Trusted manifest version ${saved.version} is active (digest ${saved.digest.slice(0, 16)}). Evidence made under earlier versions is now stale.`,
    };
  },
});
