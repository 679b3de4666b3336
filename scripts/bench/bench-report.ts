/**
 * The one shape every benchmark reports in, for `npm run bench` (scripts/bench/run-all.ts): each
 * figure beside its floor or peer measured in the same run, so a ratio means something on any
 * machine. A benchmark prints its own readable table and, last, one line
 * `BENCH_JSON {"bench": …, "ok": …, "rows": [TBenchRow …]}` that run-all collects.
 */
import os from "node:os";

export type TBenchRow = {
  figure: string;
  value: number;
  unit: string;
  /** the floor or peer measured in the same run (direct upstream, naive import, empty route, 1 worker …) */
  peer: { label: string; value: number } | null;
  /** the target, as text ("≤ 1.5× direct"), or null */
  target: string | null;
};

export type TBenchPayload = { bench: string; ok: boolean; rows: TBenchRow[]; notes?: string[] };

export const BENCH_JSON_PREFIX = "BENCH_JSON ";

export function row(
  figure: string,
  value: number,
  unit: string,
  peer: TBenchRow["peer"] = null,
  target: string | null = null,
): TBenchRow {
  return { figure, value, unit, peer, target };
}

export function printBenchJson(payload: TBenchPayload): void {
  process.stdout.write(
    `${BENCH_JSON_PREFIX}${JSON.stringify({ ...payload, machine: { cores: os.cpus().length, node: process.version } })}\n`,
  );
}

/** p in [0, 1], nearest rank; NaN for no samples. */
export function percentile(samples: number[], p: number): number {
  if (samples.length === 0) return Number.NaN;
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}
