import { randomUUID } from "node:crypto";
import fs from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../db/client";
import { DEFAULT_TASK_LIMITS } from "../contract/limits";
import { createTestDatabase } from "../testing/test-database";
import { runCli } from "../testing/run-cli";
import { writeSetting } from "../settings/operator-settings";
import { collectMetrics } from "./collect-metrics";
import { isMetricsRequestAuthorized, metricsTokenFile } from "./metrics-token";
import { taskRow } from "../testing/task-row";

/** Parses the exposition into `name{labels} value` → value (labels as written by prom-client). */
function parse(body: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of body.split("\n")) {
    if (!line || line.startsWith("#")) continue;
    const at = line.lastIndexOf(" ");
    samples.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return samples;
}

async function seedTask(db: Db, repositoryId: string, path: { state: string; atSeconds: number }[]) {
  const start = new Date("2026-12-01T10:00:00Z").getTime();
  const last = path.at(-1)!;
  const task = await db.task.create({
    data: taskRow(repositoryId, { state: last.state as never, limits: DEFAULT_TASK_LIMITS }),
  });
  let from: string | null = null;
  for (const step of path) {
    await db.taskTransition.create({
      data: {
        taskId: task.id,
        fromState: from as never,
        toState: step.state as never,
        operationId: task.operationId,
        attempt: 0,
        createdAt: new Date(start + step.atSeconds * 1000),
      },
    });
    from = step.state;
  }
  return task;
}

describe("collectMetrics (real PostgreSQL)", () => {
  let db: Db;
  let body: string;
  let contentType: string;
  const now = new Date("2026-12-15T12:00:00Z");

  beforeAll(async () => {
    ({ db } = await createTestDatabase());
    const repo = await db.targetRepository.create({
      data: { name: "demo/metrics", cloneUrl: "http://127.0.0.1:1/demo/metrics.git" },
    });
    // provisioning took 4 s, running 100 s; the second task is still running.
    const done = await seedTask(db, repo.id, [
      { state: "queued", atSeconds: 0 },
      { state: "provisioning", atSeconds: 1 },
      { state: "running", atSeconds: 5 },
      { state: "collecting", atSeconds: 105 },
    ]);
    await seedTask(db, repo.id, [
      { state: "queued", atSeconds: 0 },
      { state: "provisioning", atSeconds: 2 },
      { state: "running", atSeconds: 40 },
    ]);
    await db.guestMachine.createMany({
      data: [
        {
          taskId: done.id,
          purpose: "student",
          state: "ready",
          providerName: `m-${randomUUID()}`,
          substrate: "local",
          imageRef: "x",
          resources: {},
          ttlSeconds: 60,
          operationId: done.operationId,
        },
        {
          taskId: done.id,
          purpose: "student",
          state: "cleanup_quarantined",
          providerName: `m-${randomUUID()}`,
          substrate: "local",
          imageRef: "x",
          resources: {},
          ttlSeconds: 60,
          operationId: done.operationId,
        },
      ],
    });
    const capability = await db.relayCapability.create({
      data: {
        taskId: done.id,
        handleHash: randomUUID(),
        allowedOps: ["chat"],
        maxRequests: 10,
        maxBytes: 1000n,
        maxRequestBytes: 100,
        maxResponseBytes: 100,
        deadlineAt: now,
      },
    });
    await db.relayCall.createMany({
      data: [
        {
          capabilityId: capability.id,
          channel: "mailbox",
          operation: "chat",
          outcome: "ok",
          requestBytes: 10,
          durationMs: 80,
        },
        {
          capabilityId: capability.id,
          channel: "mailbox",
          operation: "chat",
          outcome: "ok",
          requestBytes: 10,
          durationMs: 3000,
        },
        {
          capabilityId: capability.id,
          channel: "mailbox",
          operation: "chat",
          outcome: "quota_exhausted",
          requestBytes: 10,
          durationMs: 1,
        },
      ],
    });
    await db.workerHeartbeat.create({
      data: {
        workerId: "host:1",
        version: "t",
        beatAt: new Date(now.getTime() - 7000),
        startedAt: now,
        restartCount: 2,
      },
    });
    await db.bundleBuildRequest.createMany({
      data: [
        { repositoryId: repo.id, kind: "base", state: "queued" },
        { repositoryId: repo.id, kind: "base", state: "queued", isForced: true },
        { repositoryId: repo.id, kind: "base", state: "failed" },
      ],
    });
    await writeSetting(
      { db },
      {
        key: "machines.concurrency",
        value: { maxMachines: 5, bySubstrate: {} },
        actor: null,
        reason: "test setup",
      },
    );
    ({ body, contentType } = await collectMetrics({ db, substrateLabel: "local", now: () => now }));
  });

  it("speaks the Prometheus text format", () => {
    expect(contentType).toMatch(/^text\/plain; version=0\.0\.4/);
    expect(body).toContain("# TYPE schoolcore_tasks gauge");
    expect(body).toContain("# TYPE schoolcore_task_step_duration_seconds histogram");
  });

  it("reports the machine cap and the slots taken under it", () => {
    const m = parse(body);
    expect(m.get('schoolcore_machine_slots_cap{substrate="local"}')).toBe(5);
    // the collecting task (whose ready machine it accounts for) and the running task: one slot each
    expect(m.get('schoolcore_machine_slots_taken{substrate="local"}')).toBe(2);
    expect(m.get('schoolcore_machines_in_use{substrate="local"}')).toBe(2);
  });

  it("counts operators' build requests by state, every state present", () => {
    const m = parse(body);
    expect(m.get('schoolcore_bundle_build_requests{state="queued"}')).toBe(2);
    expect(m.get('schoolcore_bundle_build_requests{state="failed"}')).toBe(1);
    expect(m.get('schoolcore_bundle_build_requests{state="running"}')).toBe(0);
  });

  it("counts tasks by state, every state present", () => {
    const m = parse(body);
    expect(m.get('schoolcore_tasks{state="collecting"}')).toBe(1);
    expect(m.get('schoolcore_tasks{state="running"}')).toBe(1);
    expect(m.get('schoolcore_tasks{state="review_pending"}')).toBe(0);
  });

  it("derives step-duration histograms from the transition log", () => {
    const m = parse(body);
    expect(m.get('schoolcore_task_step_duration_seconds_count{step="provisioning"}')).toBe(2);
    expect(m.get('schoolcore_task_step_duration_seconds_sum{step="provisioning"}')).toBe(42);
    expect(m.get('schoolcore_task_step_duration_seconds_bucket{step="provisioning",le="5"}')).toBe(1);
    expect(m.get('schoolcore_task_step_duration_seconds_bucket{step="provisioning",le="60"}')).toBe(2);
    expect(m.get('schoolcore_task_step_duration_seconds_bucket{step="running",le="+Inf"}')).toBe(1);
    expect(m.get('schoolcore_task_step_duration_seconds_bucket{step="running",le="60"}')).toBe(0);
  });

  it("reports machines live and quarantined, relay calls by outcome and latency, spend and the worker heartbeat", () => {
    const m = parse(body);
    expect(m.get("schoolcore_machines_live")).toBe(1);
    expect(m.get("schoolcore_machines_quarantined")).toBe(1);
    expect(m.get('schoolcore_machines{state="ready"}')).toBe(1);
    expect(m.get('schoolcore_relay_calls{outcome="ok"}')).toBe(2);
    expect(m.get('schoolcore_relay_calls{outcome="quota_exhausted"}')).toBe(1);
    expect(m.get('schoolcore_relay_call_duration_seconds_bucket{outcome="ok",le="0.1"}')).toBe(1);
    expect(m.get('schoolcore_relay_call_duration_seconds_bucket{outcome="ok",le="5"}')).toBe(2);
    expect(m.get('schoolcore_relay_call_duration_seconds_sum{outcome="ok"}')).toBeCloseTo(3.08);
    expect(m.get("schoolcore_spend_month_committed_micros")).toBe(0);
    expect(m.get('schoolcore_spend_ceiling_micros{ceiling="global"}')).toBeGreaterThan(0);
    expect(m.get("schoolcore_worker_heartbeat_age_seconds")).toBe(7);
    expect(m.get("schoolcore_worker_restarts")).toBe(2);
  });
});

describe("the metrics bearer token", () => {
  it("is created under DATA_DIR/secrets, shown by `schoolcore metrics token`, and the only accepted credential", async () => {
    const dataDir = await fs.mkdtemp(path.join(os.tmpdir(), "schoolcore-metrics-"));
    try {
      const shown = await runCli(["metrics", "token", "--json"], { env: { DATA_DIR: dataDir } });
      expect(shown.code, shown.stderr).toBe(0);
      const { token, file } = JSON.parse(shown.stdout) as { token: string; file: string };
      expect(file).toBe(metricsTokenFile(dataDir));
      expect(((await fs.stat(file)).mode & 0o777).toString(8)).toBe("600");
      expect(await isMetricsRequestAuthorized(dataDir, `Bearer ${token}`)).toBe(true);
      expect(await isMetricsRequestAuthorized(dataDir, `Bearer ${token}x`)).toBe(false);
      expect(await isMetricsRequestAuthorized(dataDir, token)).toBe(false);
      expect(await isMetricsRequestAuthorized(dataDir, null)).toBe(false);
    } finally {
      await fs.rm(dataDir, { recursive: true, force: true });
    }
  });
});
