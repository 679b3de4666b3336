"use server";
import { revalidatePath } from "next/cache";
import { withActorAction } from "@/app/_server/action";
import { getDb } from "@/lib/db/client";
import { regradeRepository, ZRegradeRepositorySchema } from "@/lib/verify/regrade-repository";

export const regradeRepositoryAction = withActorAction({
  action: "task.reverify",
  schema: ZRegradeRepositorySchema,
  handler: async ({ actor, input }) => {
    const result = await regradeRepository({ db: await getDb() }, { ...input, actor });
    revalidatePath("/operator/repositories/[id]/regrade", "page");
    return {
      ok: true,
      message: `Re-verification queued for ${result.queued} candidate(s) of ${result.repository}; ${result.skipped} decided or moving candidate(s) skipped. Each runs on a fresh verifier guest when a machine is free.`,
    };
  },
});
