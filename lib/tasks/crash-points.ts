/**
 * Fault injection for the lifecycle restart tests (issue 4: "the worker process killed (SIGKILL)
 * right after each transition commit"). Off unless SCHOOLCORE_FAULT_CRASH_AFTER names a state,
 * and never in production builds.
 */
import { getEnv } from "../env";

export function crashIfRequested(point: string): void {
  const env = getEnv();
  if (!env.SCHOOLCORE_FAULT_CRASH_AFTER || env.NODE_ENV === "production") return;
  if (env.SCHOOLCORE_FAULT_CRASH_AFTER === point) {
    process.stderr.write(`[fault] crash point ${point} reached: SIGKILL\n`);
    process.kill(process.pid, "SIGKILL");
  }
}
