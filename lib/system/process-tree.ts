/**
 * The machine's process table from /proc (Linux), for the last resort of a shutdown: `npm start`
 * must leave no process behind (issue 27, item 7), and a child killed with SIGKILL leaves its
 * own children orphaned — re-parented away from us — unless they are found and killed too.
 * Reading /proc is racy by nature (a process may exit between the listing and the read), so a
 * process that vanishes is skipped, never an error.
 */
import fs from "node:fs";

export type TProcessEntry = { pid: number; ppid: number; pgid: number };

/** One /proc/<pid>/stat line: `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses. */
export function parseProcStat(line: string): TProcessEntry | undefined {
  const close = line.lastIndexOf(")");
  if (close < 0) return undefined;
  const pid = Number(line.slice(0, line.indexOf(" ")));
  const [, ppid, pgid] = line
    .slice(close + 2)
    .split(" ")
    .map(Number);
  if (!Number.isInteger(pid) || !Number.isInteger(ppid) || !Number.isInteger(pgid)) return undefined;
  return { pid, ppid: ppid!, pgid: pgid! };
}

export function listProcesses(): TProcessEntry[] {
  const entries: TProcessEntry[] = [];
  let names: string[];
  try {
    names = fs.readdirSync("/proc");
  } catch {
    return entries; // no /proc: nothing to sweep (the graceful path still ran)
  }
  for (const name of names) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const entry = parseProcStat(fs.readFileSync(`/proc/${name}/stat`, "utf8"));
      if (entry) entries.push(entry);
    } catch {
      // exited since the listing
    }
  }
  return entries;
}

/** Every process below `rootPid` (children, their children …), deepest last; `rootPid` itself is not included. */
export function listDescendants(rootPid: number, processes: readonly TProcessEntry[] = listProcesses()): number[] {
  const children = new Map<number, number[]>();
  for (const p of processes) children.set(p.ppid, [...(children.get(p.ppid) ?? []), p.pid]);
  const found: number[] = [];
  const queue = [...(children.get(rootPid) ?? [])];
  while (queue.length > 0) {
    const pid = queue.shift()!;
    if (found.includes(pid)) continue;
    found.push(pid);
    queue.push(...(children.get(pid) ?? []));
  }
  return found;
}

/** Signals each pid (or process group, for a negative pid); one already gone is skipped. */
export function signalEach(pids: readonly number[], signal: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, signal);
    } catch {
      // exited meanwhile
    }
  }
}
