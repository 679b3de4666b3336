/**
 * `npm run bench:relay`: the latency the relay adds over calling the same upstream directly, as a
 * guest on the HTTP channel sees it: HTTP to the relay listener (scripts/relay.ts, its own
 * process, as `npm start` runs it) → admission → the operator-pinned transport → settlement. The
 * upstream is a loopback fake speaking the OpenAI chat-completions protocol; the database is real
 * PostgreSQL — DATABASE_URL when set, else an embedded server in a temporary directory. Median and
 * p99 at concurrency 1 and 64 (one capability, and 64 capabilities of 64 tasks), side by side.
 */
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Agent } from "undici";
import type { Db } from "../../lib/db/client";
import { issueCapability } from "../../lib/relay/issue-capability";
import { PROJECT_ROOT } from "../../lib/project-root";
import { startFakeOpenAiServer } from "../../lib/relay/testing/fake-upstream-servers";
import { createRelayTestTask } from "../../lib/relay/testing/relay-fixtures";
import { closeUpstreamAgents } from "../../lib/relay/transports/http-upstream";
import { setRelayUpstream } from "../../lib/relay/upstream-setting";
import { withBenchDatabase } from "./bench-database";
import { measure, startListenerProcess, startProcess, type Stats, type TBenchProcess } from "./bench-harness";
import { printBenchJson, row } from "./bench-report";
import { ensureCredentialsDir } from "../../lib/secrets/credential-file";

/**
 * Calls of each kind before anything is measured, alone and 8 at a time, so every figure is a
 * steady state, on both sides alike: on this VM a relayed call at c=1 kept getting faster for its
 * first ~1,500 calls (p50 3.1 → 2.6 → 2.0 → 1.7 ms over rounds of 400, then flat), and a 50-call
 * warm-up measured that ramp instead of the relay.
 */
const WARMUP = 1_600;
const SERIAL_CALLS = 400;
const CONCURRENCY = 64;
const CALLS_PER_WORKER = 30;
const MESSAGES = [
  { role: "system" as const, content: "You are terse." },
  { role: "user" as const, content: "Calling add(2, 3) returns -1. It should return 5. Fix src/add.js." },
];
const REPLY = "```file src/add.js\nexport function add(a, b) {\n  return a + b;\n}\n```\n";

/** The floor: the same forwarding without the relay (scripts/bench/bare-forwarder.ts). */
function startBareForwarder(endpoint: string, credentialFile: string): Promise<TBenchProcess> {
  return startProcess(
    "bare forwarder",
    path.join(PROJECT_ROOT, "scripts", "bench", "bare-forwarder.ts"),
    { UPSTREAM_ENDPOINT: endpoint, UPSTREAM_CREDENTIAL_FILE: credentialFile },
    async (url) => (await fetch(`${url}/`)).status === 404,
  );
}

/** /proc/<pid>/stat's fields after the command; null when unreadable (not Linux, process gone). */
async function statFieldsOf(pid: number | "self"): Promise<string[] | null> {
  try {
    return (await fs.readFile(`/proc/${pid}/stat`, "utf8")).split(") ")[1]!.split(" ");
  } catch {
    return null;
  }
}

/** CPU time a process has used, in µs: utime + stime (+ its waited-for children's), in clock ticks of 10 ms (USER_HZ = 100). */
async function cpuMicrosOf(pid: number | "self", withReapedChildren = false): Promise<number | null> {
  const fields = await statFieldsOf(pid);
  if (!fields) return null;
  const ticks =
    Number(fields[11]) + Number(fields[12]) + (withReapedChildren ? Number(fields[13]) + Number(fields[14]) : 0);
  return ticks * 10_000;
}

/** The embedded PostgreSQL's CPU: the postmaster, the backends it reaped, and the live backends (its children). */
async function postgresCpuMicros(postmasterPid: number | null): Promise<number | null> {
  if (postmasterPid === null) return null;
  const own = await cpuMicrosOf(postmasterPid, true);
  if (own === null) return null;
  let total = own;
  for (const entry of await fs.readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const fields = await statFieldsOf(Number(entry));
    if (fields && Number(fields[1]) === postmasterPid) total += (Number(fields[11]) + Number(fields[12])) * 10_000;
  }
  return total;
}

/** CPU per call (µs) of the serving process (listener or forwarder), PostgreSQL and this bench process (client + upstream). */
type TCpuPerCall = { server: number | null; postgres: number | null; bench: number | null };

/** A measurement and the CPU each process spent on it, per call. */
async function measureWithCpu(
  pids: { server: number | null; postmaster: number | null },
  concurrency: number,
  callsPerWorker: number,
  call: (worker: number) => Promise<void>,
): Promise<{ stats: Stats; cpu: TCpuPerCall }> {
  const sample = async () => ({
    server: pids.server === null ? null : await cpuMicrosOf(pids.server),
    postgres: await postgresCpuMicros(pids.postmaster),
    bench: await cpuMicrosOf("self"),
  });
  const before = await sample();
  const stats = await measure(concurrency, callsPerWorker, call);
  const after = await sample();
  const perCall = (a: number | null, b: number | null) => (a === null || b === null ? null : (b - a) / stats.count);
  return {
    stats,
    cpu: {
      server: perCall(before.server, after.server),
      postgres: perCall(before.postgres, after.postgres),
      bench: perCall(before.bench, after.bench),
    },
  };
}

async function main(db: Db, databaseUrl: string, postmasterPid: number | null) {
  const cleanups: (() => Promise<void>)[] = [];
  try {
    // --- upstream: loopback fake OpenAI server, credential in a file ---
    const credential = `bench-${randomBytes(16).toString("hex")}`;
    // A DATA_DIR of the bench's own: the credential must sit in its credentials/ directory.
    const credentialDir = await fs.mkdtemp(path.join(os.tmpdir(), "relay-bench-cred-"));
    const credentialFile = path.join(ensureCredentialsDir(credentialDir), "credential");
    await fs.writeFile(credentialFile, credential, { mode: 0o600 });
    cleanups.push(() => fs.rm(credentialDir, { recursive: true, force: true }));
    const upstream = await startFakeOpenAiServer({ credential, reply: () => REPLY, recordRequests: false });
    cleanups.push(() => upstream.close());
    await setRelayUpstream({
      db,
      value: { kind: "openai", endpoint: upstream.endpoint, model: "bench-model", credentialFile },
      reason: "relay bench",
      via: "bench",
      dataDir: credentialDir,
    });
    cleanups.push(() => closeUpstreamAgents());

    const newCapability = async (label: string) => {
      const { taskId } = await createRelayTestTask(db, label);
      const { handle } = await issueCapability(
        { db },
        {
          taskId,
          maxRequests: 100_000,
          maxBytes: 2 ** 40,
          maxRequestBytes: 64 * 1024,
          maxResponseBytes: 64 * 1024,
          maxTokens: 1_000_000_000_000,
          ttlSeconds: 3600,
        },
      );
      return { taskId, handle };
    };
    const shared = await newCapability("bench");
    // The scale-out case: one capability per task, 64 tasks calling at once.
    const perTask = await Promise.all(Array.from({ length: CONCURRENCY }, (_, i) => newCapability(`bench-${i}`)));

    // --- the two ways to reach the same upstream ---
    const directAgent = new Agent({ keepAliveTimeout: 30_000, connections: 128 });
    cleanups.push(() => directAgent.close());
    const endpoint = new URL(upstream.endpoint);
    const direct = async () => {
      const response = await directAgent.request({
        origin: endpoint.origin,
        path: endpoint.pathname,
        method: "POST",
        headers: { authorization: `Bearer ${credential}`, "content-type": "application/json" },
        body: JSON.stringify({ model: "bench-model", messages: MESSAGES, max_tokens: 256, stream: false }),
      });
      const body = (await response.body.json()) as { choices?: { message?: { content?: string } }[] };
      if (response.statusCode !== 200 || body.choices?.[0]?.message?.content !== REPLY)
        throw new Error(`direct call failed: ${response.statusCode}`);
    };
    const listener = await startListenerProcess(databaseUrl, credentialDir);
    cleanups.push(() => listener.stop());
    const relayAgent = new Agent({ keepAliveTimeout: 30_000, connections: 128 });
    cleanups.push(() => relayAgent.close());
    const postToListener = (taskId: string, handle: string) =>
      relayAgent.request({
        origin: listener.url,
        path: "/api/relay/v1/complete",
        method: "POST",
        headers: { authorization: `Bearer ${handle}`, "content-type": "application/json" },
        body: JSON.stringify({ taskId, request: { messages: MESSAGES, maxTokens: 256 } }),
      });
    const relayedWith = async ({ taskId, handle }: { taskId: string; handle: string }) => {
      const response = await postToListener(taskId, handle);
      const body = (await response.body.json()) as { completion?: { content?: string } };
      if (response.statusCode !== 200 || body.completion?.content !== REPLY)
        throw new Error(`relay call failed: ${response.statusCode} ${JSON.stringify(body).slice(0, 200)}`);
    };
    const relayed = () => relayedWith(shared);
    // The floor of the relay's own hop: the same request to the listener with a malformed handle,
    // refused before any database statement or upstream call (issue 16's "the route alone").
    const routeAlone = async () => {
      const response = await postToListener(shared.taskId, "not-a-handle");
      await response.body.dump();
      if (response.statusCode !== 403) throw new Error(`the route alone answered ${response.statusCode}, not 403`);
    };
    // Each concurrent worker is one task with its own capability.
    const relayedPerTask = (worker: number) => relayedWith(perTask[worker % perTask.length]!);
    // The floor of the forwarding itself: the same request, the same upstream, through a process
    // that only forwards (no statement, no check, no record).
    const forwarder = await startBareForwarder(upstream.endpoint, credentialFile);
    cleanups.push(() => forwarder.stop());
    const forwarded = async () => {
      const response = await relayAgent.request({
        origin: forwarder.url,
        path: "/api/relay/v1/complete",
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ taskId: shared.taskId, request: { messages: MESSAGES, maxTokens: 256 } }),
      });
      const body = (await response.body.json()) as { completion?: { content?: string } };
      if (response.statusCode !== 200 || body.completion?.content !== REPLY)
        throw new Error(`bare forward failed: ${response.statusCode}`);
    };

    for (const warmUp of [direct, relayed, routeAlone, forwarded]) {
      await measure(1, WARMUP, warmUp);
      await measure(8, WARMUP / 8, warmUp);
    }

    type TRow = {
      label: string;
      concurrency: number;
      direct: Stats;
      directCpu: TCpuPerCall;
      relay: Stats;
      cpu: TCpuPerCall;
    };
    const rows: TRow[] = [];
    for (const [label, concurrency, perWorker, relay] of [
      ["c=1", 1, SERIAL_CALLS, relayed],
      [`c=${CONCURRENCY}, 1 capability`, CONCURRENCY, CALLS_PER_WORKER, relayed],
      [`c=${CONCURRENCY}, ${CONCURRENCY} tasks`, CONCURRENCY, CALLS_PER_WORKER, relayedPerTask],
    ] as const) {
      // Measured back to back so drift (GC, page cache, neighbours on the machine) hits both alike.
      const d = await measureWithCpu({ server: null, postmaster: postmasterPid }, concurrency, perWorker, direct);
      const r = await measureWithCpu(
        { server: listener.pid, postmaster: postmasterPid },
        concurrency,
        perWorker,
        relay,
      );
      rows.push({ label, concurrency, direct: d.stats, directCpu: d.cpu, relay: r.stats, cpu: r.cpu });
    }
    const routeDirect = await measure(1, SERIAL_CALLS, direct);
    const route = await measure(1, SERIAL_CALLS, routeAlone);
    const floors: TRow[] = [];
    for (const [label, concurrency, perWorker] of [
      ["c=1, bare forward", 1, SERIAL_CALLS],
      [`c=${CONCURRENCY}, bare forward`, CONCURRENCY, CALLS_PER_WORKER],
    ] as const) {
      const d = await measureWithCpu({ server: null, postmaster: postmasterPid }, concurrency, perWorker, direct);
      const f = await measureWithCpu(
        { server: forwarder.pid, postmaster: postmasterPid },
        concurrency,
        perWorker,
        forwarded,
      );
      floors.push({ label, concurrency, direct: d.stats, directCpu: d.cpu, relay: f.stats, cpu: f.cpu });
    }
    const cores = os.cpus().length;
    // What the machine has per call if the relay is to do half the direct calls per second: all its
    // cores' time split over those calls (latency-bound c=1 rows have no such budget).
    const budgetAtHalf = (row: TRow) =>
      row.concurrency === 1 ? null : (cores * 1_000_000) / (0.5 * (row.direct.count / row.direct.wallMs) * 1000);
    const totalCpu = (cpu: TCpuPerCall) =>
      cpu.server === null || cpu.postgres === null || cpu.bench === null ? null : cpu.server + cpu.postgres + cpu.bench;

    const ms = (n: number) => `${n.toFixed(2)} ms`.padStart(10);
    const perSecond = (s: Stats) => (s.count / s.wallMs) * 1000;
    const tableLine = (label: string, d: Stats, r: Stats, withThroughput: boolean) =>
      [
        label.padEnd(22),
        ...[d.median, r.median, r.median - d.median, d.p99, r.p99, r.p99 - d.p99].map((n) => ms(n).padStart(12)),
        ...(withThroughput
          ? [
              String(Math.round(perSecond(d))),
              String(Math.round(perSecond(r))),
              `${(perSecond(r) / perSecond(d)).toFixed(2)}×`,
            ].map((t) => t.padStart(12))
          : []),
      ].join("");
    const us = (n: number | null) => (n === null ? "—" : `${Math.round(n)} µs`).padStart(12);
    const cpuLine = (row: TRow) =>
      [
        row.label.padEnd(22),
        us(row.cpu.server),
        us(row.cpu.postgres),
        us(row.cpu.bench),
        us(totalCpu(row.cpu)),
        us(row.directCpu.bench),
        us(budgetAtHalf(row)),
      ].join("");
    const lines = [
      `relay benchmark — upstream: loopback fake OpenAI-compatible server; database: ${process.env.DATABASE_URL ? "DATABASE_URL" : "embedded PostgreSQL"}; Node ${process.version}; ${os.cpus().length} cores`,
      "",
      `${"".padEnd(22)}${"direct p50".padStart(12)}${"relay p50".padStart(12)}${"added p50".padStart(12)}${"direct p99".padStart(12)}${"relay p99".padStart(12)}${"added p99".padStart(12)}${"direct rps".padStart(12)}${"relay rps".padStart(12)}${"rps ratio".padStart(12)}`,
      ...rows.map(({ label, direct: d, relay: r }) => tableLine(label, d, r, true)),
      tableLine("c=1, the route alone", routeDirect, route, false),
      ...floors.map(({ label, direct: d, relay: r }) => tableLine(label, d, r, true)),
      "",
      `CPU per call, from /proc${postmasterPid === null ? " (PostgreSQL's only for the embedded server)" : ""}:`,
      `${"".padEnd(22)}${"relay/fwd".padStart(12)}${"PostgreSQL".padStart(12)}${"bench".padStart(12)}${"total".padStart(12)}${"direct".padStart(12)}${"budget ½×".padStart(12)}`,
      ...[...rows, ...floors].map(cpuLine),
      "",
      `samples: ${rows.map((r) => `${r.label}: ${r.direct.count} direct / ${r.relay.count} relayed`).join("; ")}`,
      "relay = HTTP to the relay listener process: admission (one statement: lookup by handle hash, every check, slot + request + worst-case response reserved), transport cached per setting version, credential file read, upstream HTTP call, settlement (one statement: charge, release, call row).",
      "the route alone: the same request with a malformed handle, refused by the listener before any statement or upstream call — the floor of the extra process hop on this machine.",
      "bare forward: the same request through a process that only forwards it (node:http in, undici out, scripts/bench/bare-forwarder.ts; no statement, check or record) — the floor of any relay written in Node on this machine.",
      `CPU per call: each process's CPU time over that row's calls — relay/fwd: the relay listener (or the bare forwarder); PostgreSQL: the embedded server with all its backends; bench: this process (the client and the upstream); direct: this process for the direct calls. budget ½×: ${cores} cores' time per call if the relay is to reach 0.5× the direct rate — a total above it cannot reach 0.5× on this machine.`,
      "1 capability: all calls of one task serialize on its row lock (each batch of admissions waits for one WAL flush) — the worst case; N tasks: the scale-out case.",
    ];
    process.stdout.write(lines.join("\n") + "\n");
    // For `npm run bench`'s one table (scripts/bench/bench-report.ts): each relay figure beside the direct call.
    printBenchJson({
      bench: "relay",
      ok: true,
      rows: rows
        .flatMap(({ label, direct: d, relay: r }) => [
          row(
            `relay ${label}: p50 latency`,
            r.median,
            "ms",
            { label: "direct upstream p50", value: d.median },
            label === "c=1" ? "≤ direct + 1.5 ms" : null,
          ),
          row(`relay ${label}: p99 latency`, r.p99, "ms", { label: "direct upstream p99", value: d.p99 }),
          row(
            `relay ${label}: throughput`,
            perSecond(r),
            "rps",
            { label: "direct upstream", value: perSecond(d) },
            label === "c=1" ? null : "≥ 0.5× direct",
          ),
        ])
        .concat([
          row("relay c=1, the route alone (no database, no upstream): p50 latency", route.median, "ms", {
            label: "direct upstream p50",
            value: routeDirect.median,
          }),
        ])
        .concat(
          floors.flatMap(({ label, direct: d, relay: f }) => [
            row(`${label} (no database, no checks): p50 latency`, f.median, "ms", {
              label: "direct upstream p50",
              value: d.median,
            }),
            row(`${label} (no database, no checks): throughput`, perSecond(f), "rps", {
              label: "direct upstream",
              value: perSecond(d),
            }),
          ]),
        )
        .concat(
          rows.flatMap(({ label, cpu }) =>
            cpu.server === null ? [] : [row(`relay ${label}: CPU per call (the listener process)`, cpu.server, "µs")],
          ),
        )
        .concat(
          floors.flatMap(({ label, cpu }) =>
            cpu.server === null ? [] : [row(`${label}: CPU per call (the forwarding process)`, cpu.server, "µs")],
          ),
        )
        .concat(
          [...rows, ...floors].flatMap((r) => {
            const total = totalCpu(r.cpu);
            const budget = budgetAtHalf(r);
            return total === null || budget === null
              ? []
              : [
                  row(
                    `${r.label.includes("bare") ? r.label : `relay ${r.label}`}: CPU per call, all processes`,
                    total,
                    "µs",
                    {
                      label: "the machine's CPU per call at 0.5× direct",
                      value: budget,
                    },
                  ),
                ];
          }),
        ),
    });
  } finally {
    for (const cleanup of cleanups.reverse()) await cleanup().catch(() => undefined);
  }
}

await withBenchDatabase("relay-bench", (db, url, server) => main(db, url, server.postmasterPid));
