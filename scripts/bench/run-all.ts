/**
 * `npm run bench [-- --only relay,lifecycle] [--lifecycle-tasks N]`: every benchmark, one after
 * the other (they share the cores; in parallel they would measure each other), then one table:
 * each figure beside its floor or peer measured in the same run (direct upstream, naive import,
 * empty route, 1 worker …), the ratio, the target, and the machine (cores, CPU, Node,
 * PostgreSQL). The same table is written as JSON to bench/results.json (not committed). Each
 * benchmark prints its own table and a last `BENCH_JSON …` line (scripts/bench/bench-report.ts).
 * Speed and memory targets live here, never in timed tests.
 */
import { spawn } from "node:child_process";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { BENCH_JSON_PREFIX, type TBenchPayload, type TBenchRow } from "./bench-report";
import { startEmbeddedPostgres } from "../../lib/db/embedded-postgres";
import { findFreePort } from "../../lib/testing/free-port";

const ROOT = path.resolve(import.meta.dirname, "..", "..");
const RESULTS_FILE = path.join(ROOT, "bench", "results.json");

function flag(name: string): string | undefined {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : undefined;
}

const BENCHES: { name: string; file: string; args: string[] }[] = [
  { name: "relay", file: "relay-bench.ts", args: [] },
  { name: "chat", file: "chat-bench.ts", args: [] },
  { name: "import", file: "import-bench.ts", args: [] },
  { name: "diff-view", file: "diff-view-bench.ts", args: [] },
  {
    name: "lifecycle",
    file: "lifecycle-bench.ts",
    args: flag("lifecycle-tasks") ? ["--tasks", flag("lifecycle-tasks")!] : [],
  },
  // Issue 29's latency targets are for the demo task with nothing else running: the same pipeline, one task at a time.
  { name: "lifecycle-one", file: "lifecycle-bench.ts", args: ["--sequential", "--tasks", "8", "--workers", "1"] },
  // A full qualification run (every probe), as `probe run` executes it: issue 29's 20 s target.
  { name: "probes", file: "probe-run-bench.ts", args: [] },
];
const only = flag("only")?.split(",");

type TRun = { name: string; exitCode: number; payload: TBenchPayload | null; seconds: number };

function run(bench: (typeof BENCHES)[number]): Promise<TRun> {
  const started = Date.now();
  return new Promise((resolve) => {
    const child = spawn(
      process.execPath,
      ["--import", "tsx", path.join(ROOT, "scripts", "bench", bench.file), ...bench.args],
      {
        cwd: ROOT,
        stdio: ["ignore", "pipe", "inherit"],
      },
    );
    let payload: TBenchPayload | null = null;
    let pending = "";
    child.stdout.on("data", (d: Buffer) => {
      pending += d.toString();
      const lines = pending.split("\n");
      pending = lines.pop()!;
      for (const line of lines) {
        if (line.startsWith(BENCH_JSON_PREFIX))
          payload = normalize(bench.name, JSON.parse(line.slice(BENCH_JSON_PREFIX.length)));
        else process.stdout.write(line + "\n");
      }
    });
    child.on("exit", (code) =>
      resolve({ name: bench.name, exitCode: code ?? 1, payload, seconds: (Date.now() - started) / 1000 }),
    );
  });
}

/** A payload with `rows` is taken as is; one with per-case figures (`cases`) becomes one row per millisecond figure. */
function normalize(name: string, raw: Record<string, unknown>): TBenchPayload {
  if (Array.isArray(raw.rows)) return raw as unknown as TBenchPayload;
  const rows: TBenchRow[] = [];
  for (const figures of Array.isArray(raw.cases) ? (raw.cases as Record<string, unknown>[]) : []) {
    for (const [key, value] of Object.entries(figures)) {
      if (key.endsWith("Ms") && typeof value === "number")
        rows.push({ figure: `${String(figures.case ?? name)}: ${key}`, value, unit: "ms", peer: null, target: null });
    }
  }
  return { bench: String(raw.bench ?? name), ok: raw.ok !== false, rows };
}

async function postgresVersion(): Promise<string> {
  const query = async (url: string) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      return (await client.query<{ server_version: string }>("show server_version")).rows[0]!.server_version;
    } finally {
      await client.end();
    }
  };
  try {
    if (process.env.DATABASE_URL) return await query(process.env.DATABASE_URL);
    // The embedded server the benchmarks start, started once more just to ask (no migrations).
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "bench-machine-pg-"));
    await fs.chmod(dataDir, 0o755);
    const server = await startEmbeddedPostgres({ dataDir, port: await findFreePort() });
    try {
      return await query(server.url);
    } finally {
      await server.stop();
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  } catch (error) {
    return `unknown (${(error as Error).message.slice(0, 80)})`;
  }
}

function fmt(n: number): string {
  if (!Number.isFinite(n)) return "—";
  if (Number.isInteger(n)) return String(n);
  if (Math.abs(n) >= 100) return n.toFixed(0);
  if (Math.abs(n) >= 10) return n.toFixed(1);
  return n.toFixed(2);
}

const runs: TRun[] = [];
for (const bench of BENCHES.filter((b) => !only || only.includes(b.name))) {
  process.stdout.write(`\n== ${bench.name} (${bench.file}) ==\n`);
  runs.push(await run(bench));
}

const machine = {
  cores: os.cpus().length,
  cpu: os.cpus()[0]?.model ?? "unknown",
  memoryGiB: Math.round(os.totalmem() / 2 ** 30),
  node: process.version,
  postgres: process.env.DATABASE_URL
    ? `${await postgresVersion()} (DATABASE_URL)`
    : `${await postgresVersion()} (embedded)`,
  loadAverage: os.loadavg().map((l) => Number(l.toFixed(2))),
};
const rows = runs.flatMap((r) =>
  (r.payload?.rows ?? []).map((row) => ({
    bench: r.name,
    ...row,
    ratio: row.peer && row.peer.value !== 0 ? row.value / row.peer.value : null,
  })),
);

const table = [
  ["bench", "figure", "value", "peer / floor (same run)", "ratio", "target"],
  ...rows.map((r) => [
    r.bench,
    r.figure,
    `${fmt(r.value)} ${r.unit}`,
    r.peer ? `${r.peer.label}: ${fmt(r.peer.value)} ${r.unit}` : "",
    r.ratio === null ? "" : `${fmt(r.ratio)}×`,
    r.target ?? "",
  ]),
];
const widths = table[0]!.map((_, c) => Math.max(...table.map((line) => line[c]!.length)));
const render = (line: string[]) =>
  line
    .map((cell, c) => (c === 2 || c === 4 ? cell.padStart(widths[c]!) : cell.padEnd(widths[c]!)))
    .join("  ")
    .trimEnd();
process.stdout.write(
  [
    "",
    "== one report ==",
    `machine: ${machine.cores} cores (${machine.cpu}), ${machine.memoryGiB} GiB, Node ${machine.node}, PostgreSQL ${machine.postgres}, load ${machine.loadAverage.join(" ")}`,
    "",
    render(table[0]!),
    render(widths.map((w) => "-".repeat(w))),
    ...table.slice(1).map(render),
    "",
    ...runs.map(
      (r) =>
        `${r.name}: ${r.exitCode === 0 ? "ok" : `exit ${r.exitCode}`}${r.payload ? "" : " (no BENCH_JSON line)"}, ${r.seconds.toFixed(0)} s`,
    ),
    `written: ${path.relative(ROOT, RESULTS_FILE)}`,
  ].join("\n") + "\n",
);
await fs.mkdir(path.dirname(RESULTS_FILE), { recursive: true });
await fs.writeFile(
  RESULTS_FILE,
  JSON.stringify(
    {
      generatedAt: new Date().toISOString(),
      machine,
      benches: runs.map((r) => ({
        name: r.name,
        exitCode: r.exitCode,
        ok: r.exitCode === 0 && (r.payload?.ok ?? false),
        seconds: r.seconds,
        notes: r.payload?.notes ?? [],
      })),
      rows,
    },
    null,
    2,
  ) + "\n",
);
process.exit(runs.every((r) => r.exitCode === 0) ? 0 : 1);
