import { EventEmitter } from "node:events";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { restartDelayMs, superviseChildren, type SupervisedChild } from "./supervise-children";

class FakeChild extends EventEmitter implements SupervisedChild {
  static nextPid = 100;
  readonly pid = FakeChild.nextPid++;
  signals: NodeJS.Signals[] = [];
  constructor(
    private readonly isIgnoringTerm = false,
    /** a process stuck where not even SIGKILL ends it at once (uninterruptible sleep) */
    private readonly isUnkillable = false,
  ) {
    super();
  }
  kill(signal: NodeJS.Signals) {
    this.signals.push(signal);
    if (this.isUnkillable) return true;
    if (signal === "SIGKILL" || !this.isIgnoringTerm) queueMicrotask(() => this.emit("exit", null, signal));
    return true;
  }
  die(code: number | null, signal: NodeJS.Signals | null = null) {
    this.emit("exit", code, signal);
  }
}

describe("superviseChildren", () => {
  let clock = 0;
  beforeEach(() => {
    vi.useFakeTimers();
    clock = 0;
  });
  afterEach(() => vi.useRealTimers());

  const policy = { initialMs: 500, maxMs: 4000, healthyAfterMs: 60_000 };

  function setup(options: { isIgnoringTerm?: boolean; isUnkillable?: boolean } = {}) {
    const lines: string[] = [];
    const started: { name: string; restartCount: number; child: FakeChild }[] = [];
    const spec = (name: string) => ({
      name,
      start: (restartCount: number) => {
        const child = new FakeChild(options.isIgnoringTerm, options.isUnkillable);
        started.push({ name, restartCount, child });
        return child;
      },
    });
    const supervisor = superviseChildren({
      children: [spec("worker"), spec("web")],
      log: (l) => lines.push(l),
      backoff: policy,
      stopTimeoutMs: 1000,
      now: () => clock,
    });
    supervisor.start();
    return { supervisor, lines, started };
  }

  it("restarts only the child that died, after the backoff, telling it its restart count", async () => {
    const { supervisor, lines, started } = setup();
    const web = started[1]!.child;
    started[0]!.child.die(null, "SIGKILL");
    expect(lines.at(-1)).toBe("worker exited (signal SIGKILL); restarting in 500 ms (restart 1)");
    await vi.advanceTimersByTimeAsync(499);
    expect(started).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(started.map((s) => [s.name, s.restartCount])).toEqual([
      ["worker", 0],
      ["web", 0],
      ["worker", 1],
    ]);
    expect(web.signals).toEqual([]);
    expect(supervisor.status()).toEqual([
      { name: "worker", pid: started[2]!.child.pid, restartCount: 1, isRunning: true },
      { name: "web", pid: web.pid, restartCount: 0, isRunning: true },
    ]);
  });

  it("doubles the delay for a child that keeps crashing, up to the cap, and resets after a healthy run", async () => {
    const { lines, started } = setup();
    for (let i = 0; i < 5; i++) {
      started
        .filter((s) => s.name === "worker")
        .at(-1)!
        .child.die(1);
      await vi.advanceTimersByTimeAsync(4000);
    }
    expect(lines.map((l) => l.match(/restarting in (.+) \(restart/)![1])).toEqual([
      "500 ms",
      "1 s",
      "2 s",
      "4 s",
      "4 s",
    ]);
    clock += 60_000; // the sixth incarnation runs a healthy minute
    started
      .filter((s) => s.name === "worker")
      .at(-1)!
      .child.die(1);
    expect(lines.at(-1)).toContain("restarting in 500 ms (restart 6)");
  });

  it("stop terminates every child, escalates to SIGKILL after the grace, and never restarts", async () => {
    const { supervisor, started } = setup({ isIgnoringTerm: true });
    const stopped = supervisor.stop();
    await vi.advanceTimersByTimeAsync(1000);
    await stopped;
    expect(started.map((s) => s.child.signals)).toEqual([
      ["SIGTERM", "SIGKILL"],
      ["SIGTERM", "SIGKILL"],
    ]);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(started).toHaveLength(2);
  });

  it("stop ends in bounded time even when a child outlives SIGKILL, and says so", async () => {
    const { supervisor, started, lines } = setup({ isUnkillable: true });
    let isStopped = false;
    const stopped = supervisor.stop().then(() => (isStopped = true));
    await vi.advanceTimersByTimeAsync(1000);
    expect(isStopped).toBe(false);
    await vi.advanceTimersByTimeAsync(5000);
    await stopped;
    expect(started.map((s) => s.child.signals)).toEqual([
      ["SIGTERM", "SIGKILL"],
      ["SIGTERM", "SIGKILL"],
    ]);
    expect(lines).toContain(`worker (pid ${started[0]!.child.pid}) did not exit after SIGKILL; giving up on it`);
  });

  it("a stop during the backoff cancels the pending restart", async () => {
    const { supervisor, started } = setup();
    started[0]!.child.die(137);
    await supervisor.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(started).toHaveLength(2);
  });
});

describe("restartDelayMs", () => {
  it("is initial, doubling, capped", () => {
    const p = { initialMs: 100, maxMs: 1000, healthyAfterMs: 1 };
    expect([1, 2, 3, 4, 5, 50].map((n) => restartDelayMs(p, n))).toEqual([100, 200, 400, 800, 1000, 1000]);
  });
});
