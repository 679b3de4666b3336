/**
 * Machine create → first command output (issue 29, item 4): what the control plane waits for
 * before a guest can do anything, measured through the same SmolCloud adapter the worker uses
 * (create, start, wait until ready, one `true`), one machine at a time so the figure is latency,
 * not throughput. Each machine is destroyed before the next; the sandbox peers' figure (Daytona
 * 0.11 s, E2B 0.44 s) is the same span.
 */
import type { SmolCloudSubstrate } from "../../lib/substrate/smolcloud/smolcloud-substrate";
import { DEFAULT_GUEST_IMAGE } from "../../sidecars/local-substrate/default-guest-image";
import { percentile } from "./bench-report";

export type TFirstCommand = { p50Ms: number; p95Ms: number; samples: number };

export async function measureFirstCommand(substrate: SmolCloudSubstrate, runs: number): Promise<TFirstCommand> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    const machine = await substrate.create({
      name: `bench-first-command-${process.pid}-${i}`,
      source: { type: "smolmachine", reference: DEFAULT_GUEST_IMAGE },
      resources: { cpus: 1, memoryMb: 256, diskGb: 1 },
      network: { mode: "blocked" },
      ttlSeconds: 300,
    });
    try {
      await substrate.start(machine.id);
      await substrate.waitReady(machine.id, { timeoutMs: 30_000, pollMs: 250 });
      const result = await substrate.exec(
        machine.id,
        { command: ["echo", "ready"], timeoutSeconds: 30 },
        { maxOutputBytes: 1024 },
      );
      if (result.stdout.trim() !== "ready") throw new Error(`first command answered ${JSON.stringify(result.stdout)}`);
      samples.push(performance.now() - started);
    } finally {
      await substrate.destroy(machine.id);
    }
  }
  return { p50Ms: percentile(samples, 0.5), p95Ms: percentile(samples, 0.95), samples: samples.length };
}
