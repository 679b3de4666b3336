import "server-only";
import type { TaskRunContext } from "@/lib/tasks/task-run-context";
import { getDb } from "@/lib/db/client";
import { getEnv } from "@/lib/env";
import { createSubstrate } from "@/lib/machines/create-substrate";
import type { TClosableSubstrate } from "@/lib/spend/spend-guarded-substrate";

const globalForSubstrate = globalThis as unknown as { schoolCoreSubstrate?: TClosableSubstrate };

/** The web app's view of the lifecycle, for operator actions (cancel, quarantine release). */
export async function getRunContext(): Promise<TaskRunContext> {
  const db = await getDb();
  const env = getEnv();
  const substrate = (globalForSubstrate.schoolCoreSubstrate ??= createSubstrate({ db, env }));
  return { db, env, substrate, pollIntervalMs: 500, readyTimeoutMs: 60_000 };
}
