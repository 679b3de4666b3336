import "server-only";
import type { TaskRunContext } from "@/lib/tasks/task-run-context";
import { getDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { createSubstrate } from "@/lib/substrate/create-substrate";
import type { SmolCloudSubstrate } from "@/lib/substrate/smolcloud/smolcloud-substrate";

const globalForSubstrate = globalThis as unknown as { schoolCoreSubstrate?: SmolCloudSubstrate };

/** The web app's view of the lifecycle, for operator actions (cancel, quarantine release). */
export async function getRunContext(): Promise<TaskRunContext> {
  const db = await getDb();
  const env = getEnv();
  globalForSubstrate.schoolCoreSubstrate ??= createSubstrate(db, env);
  return { db, env, substrate: globalForSubstrate.schoolCoreSubstrate, pollIntervalMs: 500, readyTimeoutMs: 60_000 };
}
