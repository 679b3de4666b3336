import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { spawnWithTimeout } from "./spawn-with-timeout.mjs";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "spawn-with-timeout-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Alive = present and not a zombie (a killed process waits for its new parent to reap it). */
function isAlive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z /.test(fs.readFileSync(`/proc/${pid}/stat`, "utf8"));
  } catch {
    return false;
  }
}

async function waitUntilGone(pid: number, withinMs: number): Promise<boolean> {
  const deadline = Date.now() + withinMs;
  while (Date.now() < deadline) {
    if (!isAlive(pid)) return true;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return !isAlive(pid);
}

describe("spawnWithTimeout", () => {
  it("kills a command that exceeds its deadline together with its process group", async () => {
    const pidFile = path.join(tmp, "grandchild.pid");
    const started = Date.now();
    // The shell forks a grandchild, records it, then waits: both must die at the deadline.
    const result = await spawnWithTimeout("sh", ["-c", `sleep 60 & echo $! > ${pidFile}; echo started; sleep 60`], {
      timeoutMs: 500,
    });
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(result).toMatchObject({
      code: null,
      signal: "SIGKILL",
      isTimedOut: true,
      output: "started\n",
      error: undefined,
    });
    const grandchild = Number(fs.readFileSync(pidFile, "utf8"));
    expect(await waitUntilGone(grandchild, 5000), `grandchild ${grandchild} still running`).toBe(true);
  });

  it("keeps only a bounded tail of the output, stdout and stderr together", async () => {
    const script = 'process.stdout.write("a".repeat(100000)); process.stderr.write("THE END"); process.exitCode = 3;';
    const result = await spawnWithTimeout(process.execPath, ["-e", script], {
      timeoutMs: 20_000,
      maxOutputChars: 1000,
    });
    expect(result).toMatchObject({ code: 3, signal: null, isTimedOut: false });
    expect(result.output).toHaveLength(1000);
    expect(result.output.endsWith("THE END")).toBe(true);
  });

  it("reports a command that cannot start instead of throwing", async () => {
    const result = await spawnWithTimeout(path.join(tmp, "no-such-program"), [], { timeoutMs: 5000 });
    expect(result).toMatchObject({ code: null, signal: null, isTimedOut: false, output: "" });
    expect(result.error?.code).toBe("ENOENT");
  });

  it("writes to the given file descriptor, in the given directory and environment", async () => {
    const logFile = path.join(tmp, "child.log");
    const fd = fs.openSync(logFile, "w");
    const result = await spawnWithTimeout("sh", ["-c", 'pwd; echo "$GREETING" >&2'], {
      cwd: tmp,
      env: { PATH: process.env.PATH, GREETING: "hello" },
      outputFd: fd,
      timeoutMs: 20_000,
    });
    fs.closeSync(fd);
    expect(result).toMatchObject({ code: 0, isTimedOut: false, output: "" });
    expect(fs.readFileSync(logFile, "utf8")).toBe(`${fs.realpathSync(tmp)}\nhello\n`);
  });
});
