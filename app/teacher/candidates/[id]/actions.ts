"use server";
import { revalidatePath } from "next/cache";
import { withActorAction } from "@/app/_server/action";
import { getRunContext } from "@/app/_server/run-context";
import { getDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { addLineComment, ZLineCommentSchema } from "@/lib/review/add-line-comment";
import { decideCandidate, ZDecisionSchema } from "@/lib/review/decide-candidate";

const VERDICT_LABEL = { approve: "Approved", reject: "Rejected", request_changes: "Changes requested" } as const;

export const decideCandidateAction = withActorAction({
  action: "review.decide",
  schema: ZDecisionSchema,
  handler: async ({ actor, input }) => {
    const { db, env, substrate } = await getRunContext();
    const decision = await decideCandidate(
      { db, dataDir: env.dataDir, release: { env, substrate } },
      { ...input, actor },
    );
    revalidatePath(`/teacher/candidates/${input.candidateId}`);
    return {
      ok: true,
      message:
        `${VERDICT_LABEL[decision.verdict]}. The decision is bound to head ${decision.headSha.slice(0, 12)} and evidence ${decision.evidenceId.slice(0, 8)}.` +
        (decision.notChosenTaskIds.length > 0
          ? ` ${decision.notChosenTaskIds.length} other attempt(s) of this issue ended as not chosen.`
          : ""),
    };
  },
});

export const addLineCommentAction = withActorAction({
  action: "review.decide",
  schema: ZLineCommentSchema,
  handler: async ({ actor, input }) => {
    const comment = await addLineComment({ db: await getDb(), dataDir: getEnv().dataDir }, { ...input, actor });
    revalidatePath(`/teacher/candidates/${input.candidateId}`);
    return {
      ok: true,
      message: `Comment added on ${comment.path} line ${comment.line}. It goes to the student agent with "Request changes".`,
    };
  },
});
