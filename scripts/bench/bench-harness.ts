/**
 * What the relay-facing benchmarks share: latency statistics over concurrent callers, and bench
 * servers (the relay listener, a forwarder) started as their own processes on free loopback ports.
 */
import { spawn } from "node:child_process";
import path from "node:path";
import { PROJECT_ROOT } from "../../lib/project-root";
import { findFreePort } from "../../lib/testing/free-port";

export type Stats = { median: number; p99: number; mean: number; count: number; wallMs: number };

export function stats(samples: number[], wallMs: number): Stats {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return {
    median: at(0.5),
    p99: at(0.99),
    mean: sorted.reduce((a, b) => a + b, 0) / sorted.length,
    count: sorted.length,
    wallMs,
  };
}

export async function measure(
  concurrency: number,
  callsPerWorker: number,
  call: (worker: number) => Promise<void>,
): Promise<Stats> {
  const samples: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      for (let i = 0; i < callsPerWorker; i++) {
        const t0 = performance.now();
        await call(worker);
        samples.push(performance.now() - t0);
      }
    }),
  );
  return stats(samples, performance.now() - started);
}

export type TBenchProcess = { url: string; pid: number; stop(): Promise<void> };

/** A bench server as its own process on a free loopback port, ready once `isUp(url)` says so. */
export async function startProcess(
  name: string,
  script: string,
  env: Record<string, string>,
  isUp: (url: string) => Promise<boolean>,
): Promise<TBenchProcess> {
  const port = await findFreePort();
  const child = spawn(process.execPath, ["--import", "tsx", script], {
    cwd: PROJECT_ROOT,
    env: { ...process.env, ...env, PORT: String(port), RELAY_PORT: String(port) },
    stdio: ["ignore", "ignore", "inherit"],
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = () =>
    new Promise<void>((resolve) =>
      child.exitCode !== null ? resolve() : (child.once("exit", () => resolve()), child.kill("SIGTERM")),
    );
  for (const deadline = Date.now() + 30_000; Date.now() < deadline; await new Promise((r) => setTimeout(r, 100))) {
    if (child.exitCode !== null) throw new Error(`the ${name} exited with ${child.exitCode}`);
    if (await isUp(url).catch(() => false)) return { url, pid: child.pid!, stop };
  }
  await stop();
  throw new Error(`the ${name} did not start within 30 s`);
}

/** The relay listener (scripts/relay.ts), as `npm start` runs it. */
export function startListenerProcess(databaseUrl: string, dataDir: string): Promise<TBenchProcess> {
  return startProcess(
    "relay listener",
    path.join(PROJECT_ROOT, "scripts", "relay.ts"),
    { DATABASE_URL: databaseUrl, DATA_DIR: dataDir, HOSTNAME: "127.0.0.1", LOG_LEVEL: "error", NODE_ENV: "production" },
    async (url) => (await fetch(`${url}/`)).status === 404,
  );
}
