/**
 * Supervision of the long-running children `npm start` owns (the worker, the web app). A child
 * that dies is restarted with exponential backoff and a visible log line instead of taking the
 * rest of the system down with it (issue 17: a worker crash used to stop the web app too); only
 * `stop()` (Ctrl-C / SIGTERM in the launcher) ends them for good, in bounded time: SIGTERM, SIGKILL
 * after the grace, and a child that outlives even that is given up on rather than waited for
 * (issue 27, item 7: Ctrl-C stops everything, always). Each start is told how many times its name
 * was restarted, so the count can reach the dashboard's health panel.
 *
 * Framework-free and process-agnostic: a child is anything that can be killed and reports its
 * exit, so the policy is tested with in-memory children and used with real ones.
 */
import { formatDuration } from "../format/format";

export type SupervisedChild = {
  readonly pid?: number;
  kill(signal: NodeJS.Signals): boolean;
  once(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): unknown;
};

export type ChildSpec = {
  name: string;
  /** Starts one incarnation; restartCount is 0 for the first start. */
  start(restartCount: number): SupervisedChild;
};

export type BackoffPolicy = {
  /** delay before the first restart after a healthy run */
  initialMs: number;
  /** cap of the doubling delay */
  maxMs: number;
  /** a child that ran at least this long counts as healthy: its next restart starts from initialMs again */
  healthyAfterMs: number;
};

export const DEFAULT_BACKOFF: BackoffPolicy = { initialMs: 500, maxMs: 30_000, healthyAfterMs: 60_000 };

/** How long a SIGKILLed child may take to report its exit before stop() stops waiting for it. */
export const KILL_WAIT_MS = 5_000;

export type SupervisorOptions = {
  children: ChildSpec[];
  log: (line: string) => void;
  backoff?: BackoffPolicy;
  /** grace before SIGKILL when stopping (default 10 s) */
  stopTimeoutMs?: number;
  now?: () => number;
};

export type ChildStatus = { name: string; pid: number | undefined; restartCount: number; isRunning: boolean };

export type Supervisor = {
  start(): void;
  /** SIGTERM to every child, SIGKILL after the grace; resolves when all have exited, or KILL_WAIT_MS after the SIGKILL. Idempotent. */
  stop(): Promise<void>;
  status(): ChildStatus[];
};

/** The delay before restart number `consecutiveFailures` (1-based) under the policy. */
export function restartDelayMs(policy: BackoffPolicy, consecutiveFailures: number): number {
  const exponent = Math.max(0, consecutiveFailures - 1);
  return Math.min(policy.maxMs, policy.initialMs * 2 ** Math.min(exponent, 30));
}

type Slot = {
  spec: ChildSpec;
  child: SupervisedChild | undefined;
  isRunning: boolean;
  restartCount: number;
  consecutiveFailures: number;
  startedAt: number;
  timer: ReturnType<typeof setTimeout> | undefined;
  exited: Promise<void>;
};

export function superviseChildren(options: SupervisorOptions): Supervisor {
  const policy = options.backoff ?? DEFAULT_BACKOFF;
  const now = options.now ?? Date.now;
  const stopTimeoutMs = options.stopTimeoutMs ?? 10_000;
  const slots: Slot[] = options.children.map((spec) => ({
    spec,
    child: undefined,
    isRunning: false,
    restartCount: 0,
    consecutiveFailures: 0,
    startedAt: 0,
    timer: undefined,
    exited: Promise.resolve(),
  }));
  let isStopping = false;
  let stopping: Promise<void> | undefined;

  const launch = (slot: Slot) => {
    slot.timer = undefined;
    if (isStopping) return;
    let child: SupervisedChild;
    try {
      child = slot.spec.start(slot.restartCount);
    } catch (error) {
      // A spawn that throws is a failed start like any other: back off and try again.
      options.log(`${slot.spec.name} could not be started: ${(error as Error).message}`);
      scheduleRestart(slot, null, null, 0);
      return;
    }
    slot.child = child;
    slot.isRunning = true;
    slot.startedAt = now();
    slot.exited = new Promise<void>((resolve) => {
      child.once("exit", (code, signal) => {
        slot.isRunning = false;
        resolve();
        if (!isStopping) scheduleRestart(slot, code, signal, now() - slot.startedAt);
      });
    });
  };

  const scheduleRestart = (slot: Slot, code: number | null, signal: NodeJS.Signals | null, ranMs: number) => {
    slot.consecutiveFailures = ranMs >= policy.healthyAfterMs ? 1 : slot.consecutiveFailures + 1;
    const delay = restartDelayMs(policy, slot.consecutiveFailures);
    slot.restartCount += 1;
    const how = signal ? `signal ${signal}` : `code ${code}`;
    options.log(
      `${slot.spec.name} exited (${how}); restarting in ${formatDuration(delay)} (restart ${slot.restartCount})`,
    );
    slot.timer = setTimeout(() => launch(slot), delay);
  };

  return {
    start() {
      for (const slot of slots) launch(slot);
    },
    status: () =>
      slots.map((s) => ({
        name: s.spec.name,
        pid: s.child?.pid,
        restartCount: s.restartCount,
        isRunning: s.isRunning,
      })),
    stop: () =>
      (stopping ??= (async () => {
        isStopping = true;
        await Promise.all(
          slots.map(async (slot) => {
            if (slot.timer) clearTimeout(slot.timer);
            slot.timer = undefined;
            if (!slot.isRunning || !slot.child) return;
            const child = slot.child;
            let giveUp: () => void = () => undefined;
            const givenUp = new Promise<void>((resolve) => (giveUp = resolve));
            let waitTimer: ReturnType<typeof setTimeout> | undefined;
            const killTimer = setTimeout(() => {
              child.kill("SIGKILL");
              waitTimer = setTimeout(() => {
                options.log(`${slot.spec.name} (pid ${child.pid}) did not exit after SIGKILL; giving up on it`);
                giveUp();
              }, KILL_WAIT_MS);
            }, stopTimeoutMs);
            child.kill("SIGTERM");
            await Promise.race([slot.exited, givenUp]);
            clearTimeout(killTimer);
            clearTimeout(waitTimer);
          }),
        );
      })()),
  };
}
