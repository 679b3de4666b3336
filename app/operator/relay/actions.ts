"use server";
import { z } from "zod";
import { withActorAction } from "@/app/_server/action";
import { getDb } from "@/lib/db/client";
import { testRelayUpstream } from "@/lib/relay/check-relay-upstream";

export const testUpstreamAction = withActorAction({
  action: "relay.manage",
  schema: z.object({}),
  handler: async ({ actor }) => {
    const result = await testRelayUpstream({ db: await getDb() }, { actor });
    return result.isOk
      ? { ok: true, message: `${result.kind} answered in ${result.latencyMs} ms: “${result.excerpt}”` }
      : {
          ok: false,
          error: `${result.kind} failed after ${result.latencyMs} ms${result.status ? ` (HTTP ${result.status})` : ""}: ${result.error}`,
        };
  },
});
