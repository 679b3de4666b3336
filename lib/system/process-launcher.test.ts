import diagnosticsChannel from "node:diagnostics_channel";
import fs from "node:fs";
import { finished } from "node:stream/promises";
import { describe, expect, it } from "vitest";
import {
  LAUNCH_CHANNEL,
  LaunchError,
  launchProcess,
  launcherPid,
  stopProcessLauncher,
  type TLaunchedProcess,
} from "./process-launcher";

const ENV = { PATH: process.env.PATH ?? "/usr/bin:/bin" };

async function readAll(stream: NodeJS.ReadableStream | null): Promise<string> {
  if (!stream) return "";
  let text = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => (text += chunk));
  await finished(stream);
  return text;
}

function parentOf(pid: number): number {
  const stat = fs.readFileSync(`/proc/${pid}/stat`, "utf8");
  return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
}

describe("the process launcher", () => {
  it("runs a process with its stdin, stdout, stderr and exit code, as a child of the launcher, not of this process", async () => {
    const child = await launchProcess({
      file: "sh",
      args: ["-c", 'read line; echo "out:$line"; echo err >&2; echo $PPID > /dev/null; exit 3'],
      env: ENV,
      cwd: "/",
    });
    expect(parentOf(child.pid)).toBe(launcherPid());
    expect(launcherPid()).not.toBe(process.pid);
    child.stdin!.end("hello\n");
    const [stdout, stderr, exit] = await Promise.all([readAll(child.stdout), readAll(child.stderr), child.exited]);
    expect({ stdout, stderr, exit }).toEqual({
      stdout: "out:hello\n",
      stderr: "err\n",
      exit: { code: 3, signal: null },
    });
  });

  it("settles processes that end before their streams are accepted (200 quick ones, 20 at a time)", async () => {
    const one = async (i: number) => {
      const child = await launchProcess({ file: "true", args: [], env: ENV, cwd: "/", stdin: "ignore" });
      const [stdout, exit] = await Promise.all([readAll(child.stdout), child.exited, readAll(child.stderr)]);
      return `${i}:${stdout}:${exit.code}`;
    };
    for (let batch = 0; batch < 10; batch++) {
      const results = await Promise.all(Array.from({ length: 20 }, (_, i) => one(batch * 20 + i)));
      expect(results.every((r) => r.endsWith("::0"))).toBe(true);
    }
  });

  it("pipes one process's output into another's held stdin without passing through this process", async () => {
    const hasher = await launchProcess({ file: "sha256sum", args: ["-b", "-"], env: ENV, cwd: "/", stdin: "held" });
    const producer = await launchProcess({
      file: "printf",
      args: ["abc"],
      env: ENV,
      cwd: "/",
      stdin: "ignore",
      stdout: hasher,
    });
    expect(producer.stdout).toBeNull();
    const [digest] = await Promise.all([readAll(hasher.stdout), producer.exited, readAll(producer.stderr)]);
    expect(digest.slice(0, 64)).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    expect((await hasher.exited).code).toBe(0);
  });

  it("kills a detached process's whole group", async () => {
    const child = await launchProcess({
      file: "sh",
      args: ["-c", "sleep 30 & echo $!; wait"],
      env: ENV,
      cwd: "/",
      detached: true,
    });
    let grandchild = "";
    child.stdout!.setEncoding("utf8");
    await new Promise<void>((resolve) =>
      child.stdout!.on("data", (text: string) => {
        grandchild += text;
        if (grandchild.includes("\n")) resolve();
      }),
    );
    child.kill("SIGKILL");
    expect((await child.exited).signal).toBe("SIGKILL");
    await new Promise((resolve) => setTimeout(resolve, 100));
    // gone, or a zombie waiting for whoever inherited it to reap it
    const state = fs.existsSync(`/proc/${Number(grandchild)}`)
      ? fs
          .readFileSync(`/proc/${Number(grandchild)}/stat`, "utf8")
          .split(") ")[1]!
          .slice(0, 1)
      : "gone";
    expect(["gone", "Z"]).toContain(state);
  });

  it("refuses a missing program with Node's error code", async () => {
    const error = await launchProcess({ file: "no-such-program-here", args: [], env: ENV, cwd: "/" }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(LaunchError);
    expect((error as LaunchError).code).toBe("ENOENT");
  });

  it("publishes each launch (file, pid, the caller's stack) for P4's host-process watch", async () => {
    const seen: { file: string; pid: number; stack: string }[] = [];
    const onLaunch = (message: unknown) => seen.push(message as (typeof seen)[number]);
    diagnosticsChannel.subscribe(LAUNCH_CHANNEL, onLaunch);
    let child: TLaunchedProcess;
    try {
      child = await launchProcess({ file: "true", args: [], env: ENV, cwd: "/" });
    } finally {
      diagnosticsChannel.unsubscribe(LAUNCH_CHANNEL, onLaunch);
    }
    await child.exited;
    expect(seen).toEqual([
      { file: "true", pid: child.pid, stack: expect.stringContaining("process-launcher.test.ts") },
    ]);
  });

  it("when the launcher dies, a running process is reported lost and the next launch starts a new launcher", async () => {
    const running = await launchProcess({ file: "sleep", args: ["5"], env: ENV, cwd: "/", detached: true });
    const first = launcherPid()!;
    process.kill(first, "SIGKILL");
    expect(await running.exited).toEqual({ code: null, signal: null, isLauncherLost: true });
    running.kill("SIGKILL");
    const next = await launchProcess({ file: "true", args: [], env: ENV, cwd: "/" });
    expect((await next.exited).code).toBe(0);
    expect(launcherPid()).not.toBe(first);
  });

  it("stops on a graceful stop and is reaped here (npm start leaves nothing behind, not even a zombie)", async () => {
    await (
      await launchProcess({ file: "true", args: [], env: ENV, cwd: "/" })
    ).exited;
    const pid = launcherPid()!;
    await stopProcessLauncher();
    expect(launcherPid()).toBeUndefined();
    expect(fs.existsSync(`/proc/${pid}`)).toBe(false);
    await stopProcessLauncher(); // nothing running: nothing to do
  });
});
