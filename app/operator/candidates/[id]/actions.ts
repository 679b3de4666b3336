"use server";
import { withActorAction } from "@/app/_server/action";
import { reproveCandidate, ZReproveCandidateInputSchema } from "@/lib/candidate/reprove-candidate";
import { getDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";

/** Re-prove: rebuild the head from base + artifact; any disagreement comes back as the error. */
export const reproveCandidateAction = withActorAction({
  action: "candidate.reprove",
  schema: ZReproveCandidateInputSchema,
  handler: async ({ actor, input }) => {
    const result = await reproveCandidate(
      { db: await getDb(), dataDir: getEnv().dataDir },
      { candidateId: input.candidateId, actor },
    );
    return { ok: true, message: `Reproduced: the rebuilt head ${result.rebuiltHeadSha} is the recorded head.` };
  },
});
