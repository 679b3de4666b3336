/**
 * The process table: /proc stat lines parse even when the command name holds spaces and
 * parentheses, and descendants are found through every generation, never above the root.
 */
import { spawn } from "node:child_process";
import { describe, expect, it } from "vitest";
import { listDescendants, listProcesses, parseProcStat } from "./process-tree";

describe("process tree", () => {
  it("parses a stat line whose command name holds spaces and parentheses", () => {
    expect(parseProcStat("4242 (a (b) c) S 17 4242 4242 0 -1 4194560")).toEqual({ pid: 4242, ppid: 17, pgid: 4242 });
    expect(parseProcStat("garbage")).toBeUndefined();
  });

  it("finds children and grandchildren, not the root, its parent or its siblings", () => {
    const table = [
      { pid: 1, ppid: 0, pgid: 1 },
      { pid: 10, ppid: 1, pgid: 10 },
      { pid: 11, ppid: 10, pgid: 10 },
      { pid: 12, ppid: 11, pgid: 12 },
      { pid: 20, ppid: 1, pgid: 20 },
    ];
    expect(listDescendants(10, table)).toEqual([11, 12]);
    expect(listDescendants(12, table)).toEqual([]);
  });

  it("sees a real grandchild of this process", async () => {
    const child = spawn("sh", ["-c", "sleep 30 & wait"], { stdio: "ignore" });
    try {
      let descendants: number[] = [];
      for (let i = 0; i < 50 && descendants.length < 2; i++) {
        await new Promise((r) => setTimeout(r, 50));
        descendants = listDescendants(process.pid).filter(
          (pid) => pid === child.pid || listDescendants(child.pid!).includes(pid),
        );
      }
      expect(descendants).toContain(child.pid);
      expect(descendants).toHaveLength(2);
      expect(listProcesses().find((p) => p.pid === child.pid)?.ppid).toBe(process.pid);
    } finally {
      for (const pid of listDescendants(child.pid!)) process.kill(pid, "SIGKILL");
      child.kill("SIGKILL");
    }
  });
});
