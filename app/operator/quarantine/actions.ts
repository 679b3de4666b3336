"use server";
import { revalidatePath } from "next/cache";
import { withActorAction } from "@/app/_server/action";
import { getRunContext } from "@/app/_server/run-context";
import { releaseQuarantine, ZReleaseQuarantineSchema } from "@/lib/machines/release-quarantine";

export const retryDestroyAndReleaseAction = withActorAction({
  action: "machine.manage",
  schema: ZReleaseQuarantineSchema,
  handler: async ({ actor, input }) => {
    const machine = await releaseQuarantine(await getRunContext(), { ...input, actor });
    revalidatePath("/operator/quarantine");
    return { ok: true, message: `Destroy worked: machine ${machine.id.slice(0, 8)} released (${machine.state}).` };
  },
});
