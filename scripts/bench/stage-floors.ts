/**
 * The floors of the lifecycle's stages (issue 29), measured on this machine in the same run as the
 * stages themselves: what the work would cost with nothing around it — a bubblewrap sandbox that
 * runs `true` (a guest's cheapest command), Node's start-up (every guest program is a Node process),
 * and `node --test` of the demo repository run directly (what the agent's tests and the trusted
 * checks run). Medians of a few runs each.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { PROJECT_ROOT } from "../../lib/project-root";
import { percentile } from "./bench-report";

export type TStageFloors = { bwrapTrueMs: number; nodeStartMs: number; demoTestsMs: number };

const NODE = path.join(PROJECT_ROOT, "node_modules", "node", "bin", "node");

function medianMs(runs: number, command: string, args: string[], cwd?: string): number {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const result = spawnSync(command, args, { cwd, stdio: "ignore" });
    // Could not run at all (no bwrap here): no such floor on this machine, shown as —. A non-zero
    // exit still took its time (the demo's own test fails until the issue is fixed).
    if (result.error || result.signal) return Number.NaN;
    samples.push(performance.now() - started);
  }
  return percentile(samples, 0.5);
}

export async function measureStageFloors(demoRepository: string): Promise<TStageFloors> {
  return {
    bwrapTrueMs: medianMs(20, "bwrap", ["--ro-bind", "/", "/", "--unshare-all", "--die-with-parent", "true"]),
    nodeStartMs: medianMs(10, NODE, ["-e", "0"]),
    demoTestsMs: medianMs(5, NODE, ["--test"], demoRepository),
  };
}
