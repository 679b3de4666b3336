/**
 * The processes of the system under test, found the way an operator would (`ps`): by command
 * line and by the DATA_DIR in their environment, so a spec can kill exactly the worker of this
 * run and never a process of another run on the same machine.
 */
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { cliJson } from "./cli";

const ROOT = path.resolve(import.meta.dirname, "..");

function readEnviron(pid: string): Record<string, string> {
  try {
    const raw = fs.readFileSync(`/proc/${pid}/environ`, "utf8");
    return Object.fromEntries(
      raw
        .split("\0")
        .filter(Boolean)
        .map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]),
    );
  } catch {
    return {};
  }
}

/** Pids of the live worker processes (scripts/worker.ts) serving this run's DATA_DIR. */
export function findWorkerPids(dataDir = process.env.E2E_DATA_DIR!): number[] {
  const pids: number[] = [];
  for (const pid of fs.readdirSync("/proc").filter((p) => /^\d+$/.test(p))) {
    let cmdline: string;
    try {
      cmdline = fs.readFileSync(`/proc/${pid}/cmdline`, "utf8");
    } catch {
      continue;
    }
    const args = cmdline.split("\0");
    // tsx re-executes node with the script as an argument; the leaf process carries the loader flags.
    if (!args.some((a) => a.endsWith(path.join("scripts", "worker.ts")))) continue;
    if (path.resolve(readEnviron(pid).DATA_DIR ?? "") !== path.resolve(dataDir)) continue;
    pids.push(Number(pid));
  }
  return pids.sort((a, b) => a - b);
}

/**
 * Opens the dispatch gate the way an operator does on the local substrate (development mode),
 * recording a fixture qualification run first when the configuration has none (qualify-dispatch.ts).
 */
export function ensureDispatchOpen(): void {
  if (cliJson<{ isOpen: boolean }>(["dispatch", "status"]).isOpen) return;
  try {
    cliJson(["dispatch", "on", "--development"]);
    return;
  } catch {
    // not qualified yet
  }
  execFileSync(process.execPath, ["--import", "tsx", path.join(ROOT, "e2e", "qualify-dispatch.ts")], {
    cwd: ROOT,
    env: { ...process.env, DATA_DIR: process.env.E2E_DATA_DIR },
    stdio: "inherit",
  });
  if (!cliJson<{ isOpen: boolean }>(["dispatch", "status"]).isOpen) throw new Error("the dispatch gate did not open");
}

/** Creates a demo task through the real CLI with dispatch open; returns its id. */
export function createDemoTask(title: string): string {
  ensureDispatchOpen();
  const promptFile = path.join(os.tmpdir(), `schoolcore-e2e-prompt-${process.pid}-${Date.now()}.md`);
  fs.writeFileSync(promptFile, `${title}\n\nadd() subtracts instead of adding. Calling add(2, 3) returns -1.\n`);
  try {
    return cliJson<{ id: string }>([
      "task",
      "create",
      "--repo",
      "demo/calculator",
      "--issue",
      "1",
      "--prompt-file",
      promptFile,
      "--title",
      title,
    ]).id;
  } finally {
    fs.rmSync(promptFile, { force: true });
  }
}

export function readTaskState(taskId: string): string {
  return cliJson<{ state: string }>(["task", "show", taskId]).state;
}

export async function waitForTaskState(taskId: string, states: string[], timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const state = readTaskState(taskId);
    if (states.includes(state)) return state;
    if (["blocked", "failed"].includes(state))
      throw new Error(
        `task ${taskId} ended ${state}: ${JSON.stringify(cliJson(["task", "show", taskId])).slice(0, 2000)}`,
      );
    if (Date.now() > deadline)
      throw new Error(`task ${taskId} is ${state}, not ${states.join("/")}, after ${timeoutMs / 1000}s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}
