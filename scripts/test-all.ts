/**
 * `npm test`: typecheck (the app, and the guest programs from their JSDoc), lint, formatting (Prettier), layering (dependency-cruiser), unit + integration tests (Vitest, real Postgres, real bubblewrap,
 * real git), then the Playwright e2e suite in Debian's Chromium against the real system.
 */
import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { ensureBubblewrap } from "../lib/system/ensure-bubblewrap";

const ROOT = path.resolve(import.meta.dirname, "..");
const bin = (name: string) => path.join(ROOT, "node_modules", ".bin", name);

type Step = { name: string; command: string; args: string[] };

const STEPS: Step[] = [
  { name: "prisma generate", command: process.execPath, args: [path.join(ROOT, "scripts", "prisma-generate.mjs")] },
  { name: "typecheck", command: bin("tsc"), args: ["--noEmit", "-p", "tsconfig.json"] },
  // The guest programs are plain JavaScript (uploaded as they are, run by Node in the guest), checked from their JSDoc
  // against Node's own library and module resolution; the step above checks their tests and TypeScript callers against those types.
  { name: "typecheck guest", command: bin("tsc"), args: ["--noEmit", "-p", "guest/tsconfig.json"] },
  { name: "lint", command: bin("eslint"), args: ["--max-warnings", "0", "."] },
  { name: "format", command: bin("prettier"), args: ["--check", "--log-level", "warn", "."] },
  {
    name: "layering",
    command: process.execPath,
    args: [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), path.join(ROOT, "scripts", "check-layers.ts")],
  },
  { name: "unit + integration", command: bin("vitest"), args: ["run"] },
  {
    name: "e2e",
    command: process.execPath,
    args: [path.join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), path.join(ROOT, "e2e", "run-e2e.ts")],
  },
];

/**
 * CPU seconds (user + system) of every finished child process tree, from /proc/self/stat
 * (cutime + cstime, in clock ticks of 100 Hz on Linux): the summary shows each step's CPU beside
 * its wall time, so it is visible which steps are bound by the cores and which wait.
 */
function childCpuSeconds(): number | null {
  try {
    const stat = fs.readFileSync("/proc/self/stat", "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // fields[0] is field 3 (state); cutime and cstime are fields 16 and 17
    return (Number(fields[13]) + Number(fields[14])) / 100;
  } catch {
    return null;
  }
}

function run(step: Step): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(step.command, step.args, {
      cwd: ROOT,
      stdio: "inherit",
      env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" },
    });
    child.on("exit", (code) => resolve(code ?? 1));
    child.on("error", () => resolve(127));
  });
}

async function main() {
  ensureBubblewrap((line) => process.stdout.write(`[test] ${line}\n`));
  if (!fs.existsSync("/usr/bin/chromium")) {
    process.stderr.write("[test] Debian's chromium is required for the e2e suite: apt-get install -y chromium\n");
    process.exit(1);
  }
  const only = process.argv.slice(2);
  const results: { name: string; code: number; seconds: number; cpuSeconds: number | null }[] = [];
  for (const step of STEPS.filter((s) => only.length === 0 || only.includes(s.name))) {
    process.stdout.write(`\n[test] ── ${step.name} ──\n`);
    const started = Date.now();
    const cpuBefore = childCpuSeconds();
    const code = await run(step);
    const cpuAfter = childCpuSeconds();
    const cpuSeconds = cpuBefore === null || cpuAfter === null ? null : Math.round(cpuAfter - cpuBefore);
    results.push({ name: step.name, code, seconds: Math.round((Date.now() - started) / 1000), cpuSeconds });
    if (code !== 0) break; // later steps depend on earlier ones (a type error makes e2e meaningless)
  }
  process.stdout.write("\n[test] summary\n");
  for (const r of results)
    process.stdout.write(
      `[test]   ${r.code === 0 ? "pass" : "FAIL"}  ${r.name} (${r.seconds}s${r.cpuSeconds === null ? "" : `, CPU ${r.cpuSeconds}s`})\n`,
    );
  const wall = results.reduce((sum, r) => sum + r.seconds, 0);
  process.stdout.write(`[test]   total ${wall}s (${(wall / 60).toFixed(1)} min)\n`);
  process.exit(results.every((r) => r.code === 0) && results.length > 0 ? 0 : 1);
}

void main();
