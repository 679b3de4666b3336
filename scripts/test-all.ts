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

function run(step: Step): Promise<number> {
  return new Promise((resolve) => {
    const child = spawn(step.command, step.args, { cwd: ROOT, stdio: "inherit", env: { ...process.env, NEXT_TELEMETRY_DISABLED: "1" } });
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
  const results: { name: string; code: number; seconds: number }[] = [];
  for (const step of STEPS.filter((s) => only.length === 0 || only.includes(s.name))) {
    process.stdout.write(`\n[test] ── ${step.name} ──\n`);
    const started = Date.now();
    const code = await run(step);
    results.push({ name: step.name, code, seconds: Math.round((Date.now() - started) / 1000) });
    if (code !== 0) break; // later steps depend on earlier ones (a type error makes e2e meaningless)
  }
  process.stdout.write("\n[test] summary\n");
  for (const r of results) process.stdout.write(`[test]   ${r.code === 0 ? "pass" : "FAIL"}  ${r.name} (${r.seconds}s)\n`);
  process.exit(results.every((r) => r.code === 0) && results.length > 0 ? 0 : 1);
}

void main();
