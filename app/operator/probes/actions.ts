"use server";
import { revalidatePath } from "next/cache";
import { z } from "zod";
import { withActorAction } from "@/app/_server/action";
import { getDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { parseProbeSelection, PROBE_IDS } from "@/lib/probes/probe-registry";
import { requestProbeRun } from "@/lib/probes/request-probe-run";
import { setDispatch } from "@/lib/probes/set-dispatch";

/** Queues a run; the worker executes it as a job (a web restart does not stop it). */
export const requestProbeRunAction = withActorAction({
  action: "probe.run",
  schema: z.object({ probes: z.union([z.literal("all"), z.enum(PROBE_IDS)]) }),
  handler: async ({ actor, input }) => {
    const run = await requestProbeRun(
      { db: await getDb(), env: getEnv() },
      { probes: parseProbeSelection(input.probes === "all" ? undefined : input.probes), actor },
    );
    revalidatePath("/operator/probes");
    return { ok: true, message: `Probe run ${run.id} queued (${run.probes.join(", ")}).`, id: run.id };
  },
});

export const setDispatchAction = withActorAction({
  action: "dispatch.toggle",
  schema: z.object({ mode: z.enum(["off", "development", "production"]) }),
  handler: async ({ actor, input }) => {
    const gate = await setDispatch({ db: await getDb(), env: getEnv() }, { mode: input.mode, actor, via: "web" });
    revalidatePath("/operator/probes");
    revalidatePath("/operator");
    return { ok: true, message: gate.isOpen ? `Dispatch is on (${gate.mode}).` : "Dispatch is off." };
  },
});
