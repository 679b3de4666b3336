"use server";
import { revalidatePath } from "next/cache";
import { withActorAction } from "@/app/_server/action";
import { getRunContext } from "@/app/_server/run-context";
import { releaseQuarantine, ZReleaseQuarantineSchema } from "@/lib/machines/release-quarantine";

export const releaseQuarantineAction = withActorAction({
  action: "machine.manage",
  schema: ZReleaseQuarantineSchema,
  handler: async ({ actor, input }) => {
    const machine = await releaseQuarantine(await getRunContext(), { input, actorId: actor.userId });
    revalidatePath("/operator/machines");
    return { ok: true, message: `Machine ${machine.id} released: ${machine.state}.` };
  },
});
