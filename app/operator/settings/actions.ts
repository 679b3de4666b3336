"use server";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { withActorAction } from "@/app/_server/action";
import { can } from "@/lib/auth/permissions";
import { getDb } from "@/lib/db/client";
import { AppError } from "@/lib/errors";
import { writeSetting } from "@/lib/settings/operator-settings";
import type { TSettingKey } from "@/lib/settings/setting-schemas";

const EDITABLE = ["task.limits", "guest.image", "verifier.image", "guest.agent", "spend.ceilings", "spend.rates"] as const satisfies readonly TSettingKey[];
const PERMISSION_OF: Record<(typeof EDITABLE)[number], "limits.edit" | "spend.edit"> = {
  "task.limits": "limits.edit",
  "guest.image": "limits.edit",
  "verifier.image": "limits.edit",
  "guest.agent": "limits.edit",
  "spend.ceilings": "spend.edit",
  "spend.rates": "spend.edit",
};

export const toggleDispatchAction = withActorAction({
  action: "dispatch.toggle",
  schema: z.object({ enabled: z.enum(["true", "false"]) }),
  handler: async ({ actor, input }) => {
    const value = await writeSetting(await getDb(), { key: "dispatch", value: { enabled: input.enabled === "true" }, actorId: actor.userId });
    revalidatePath("/operator/settings");
    return { ok: true, message: `Dispatch is ${value.enabled ? "on" : "off"}.` };
  },
});

export const saveSettingAction = withActorAction({
  action: "limits.edit",
  schema: z.object({ key: z.enum(EDITABLE), value: z.string().max(20_000) }),
  handler: async ({ actor, input }) => {
    if (!can(actor, PERMISSION_OF[input.key])) throw new AppError("NOT_FOUND", "Not found.");
    let value: unknown;
    try {
      value = JSON.parse(input.value);
    } catch {
      return { ok: false, error: "The value is not valid JSON." };
    }
    await writeSetting(await getDb(), { key: input.key, value, actorId: actor.userId });
    revalidatePath("/operator/settings");
    return { ok: true, message: `${input.key} saved.` };
  },
});


