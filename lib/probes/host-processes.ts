/**
 * Counts the control plane's own child processes while a probe runs (P4: zero host fallback).
 * Two independent observers: Node's `child_process` diagnostics channel sees every spawn this
 * process makes (with the spawning stack) and the `school-core:launch` channel every process the
 * process launcher starts for it (lib/system/process-launcher.ts: git and sha256sum go through it),
 * and a /proc scan every 20 ms sees direct children and the launcher's children however they were
 * started. The launcher itself (a Node process running our own file) is not counted; what it
 * starts is. Only allow-listed trusted binaries (git, and sha256sum, which hashes git's diff output
 * through a pipe: lib/git/git-diff.ts) may appear. The probes of a run run side by side, so the
 * watch also sees what the others make the control plane do (a candidate's import).
 */
import diagnosticsChannel from "node:diagnostics_channel";
import fs from "node:fs";
import path from "node:path";
import { LAUNCH_CHANNEL, launcherPid, type TLaunchMessage } from "../system/process-launcher";

export const ALLOWED_HOST_BINARIES = ["git", "sha256sum"] as const;

export type THostSpawn = { file: string; via: "spawn" | "proc"; pid?: number };

export type THostProcessWatch = {
  start(): void;
  stop(): THostSpawn[];
};

function readProcChildren(parentPid: number): { pid: number; comm: string; exe: string }[] {
  const out: { pid: number; comm: string; exe: string }[] = [];
  let entries: string[] = [];
  try {
    entries = fs.readdirSync("/proc");
  } catch {
    return out;
  }
  for (const entry of entries) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, "utf8");
      // pid (comm) state ppid …; comm may contain spaces and parentheses: split at the last ')'
      const close = stat.lastIndexOf(")");
      const ppid = Number(stat.slice(close + 2).split(" ")[1]);
      if (ppid !== parentPid) continue;
      const comm = stat.slice(stat.indexOf("(") + 1, close);
      let exe = "";
      try {
        exe = fs.readlinkSync(`/proc/${entry}/exe`);
      } catch {
        exe = "";
      }
      out.push({ pid: Number(entry), comm, exe });
    } catch {
      // the process ended meanwhile
    }
  }
  return out;
}

export function isAllowedHostBinary(file: string): boolean {
  return (ALLOWED_HOST_BINARIES as readonly string[]).includes(path.basename(file));
}

export function createHostProcessWatch(
  options: { isProviderSpawn?(info: { file: string; stack: string }): boolean } = {},
): THostProcessWatch {
  const seen: THostSpawn[] = [];
  const known = new Set<number>();
  const providerPids = new Set<number>();
  let timer: NodeJS.Timeout | undefined;
  const onSpawn = (message: unknown) => {
    const child = (message as { process?: { spawnfile?: string | null; pid?: number } }).process;
    const stack = new Error().stack ?? "";
    // spawnfile is set once spawn() has run; the channel publishes just before
    setImmediate(() => {
      const file = child?.spawnfile ?? "?";
      if (child?.pid !== undefined && child.pid === launcherPid()) return; // the launcher: what it starts is counted
      if (options.isProviderSpawn?.({ file, stack })) {
        if (child?.pid) providerPids.add(child.pid);
        return;
      }
      seen.push({ file, via: "spawn", pid: child?.pid });
    });
  };
  const onLaunch = (message: unknown) => {
    const { file, pid, stack } = message as TLaunchMessage;
    if (options.isProviderSpawn?.({ file, stack })) {
      providerPids.add(pid);
      return;
    }
    // the /proc scan may have seen it first (a launch is published once its streams are connected)
    const index = seen.findIndex((s) => s.pid === pid);
    if (index >= 0) seen[index] = { file, via: "spawn", pid };
    else seen.push({ file, via: "spawn", pid });
  };
  const childrenOfThisProcess = () => {
    const launcher = launcherPid();
    const direct = readProcChildren(process.pid).filter((child) => child.pid !== launcher);
    return launcher === undefined ? direct : [...direct, ...readProcChildren(launcher)];
  };
  const scan = () => {
    for (const child of childrenOfThisProcess()) {
      if (known.has(child.pid) || providerPids.has(child.pid)) continue;
      known.add(child.pid);
      // a pid first seen through the channel is already counted
      setImmediate(() => {
        if (providerPids.has(child.pid) || seen.some((s) => s.pid === child.pid)) return;
        seen.push({ file: child.exe || child.comm, via: "proc", pid: child.pid });
      });
    }
  };
  return {
    start() {
      for (const child of childrenOfThisProcess()) known.add(child.pid); // children from before the probe
      diagnosticsChannel.subscribe("child_process", onSpawn);
      diagnosticsChannel.subscribe(LAUNCH_CHANNEL, onLaunch);
      timer = setInterval(scan, 20);
    },
    stop() {
      if (timer) clearInterval(timer);
      diagnosticsChannel.unsubscribe("child_process", onSpawn);
      diagnosticsChannel.unsubscribe(LAUNCH_CHANNEL, onLaunch);
      return [...seen];
    },
  };
}
