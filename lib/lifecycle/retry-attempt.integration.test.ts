/**
 * Retry as a new attempt (issue 13), on the local substrate with real bubblewrap guests: a task
 * blocked by an injected provider 500 is retried and reaches review with both attempts on record
 * (operations, machines, capabilities); transient errors plan one automatic retry with backoff,
 * used at most the operator's count; integrity failures and other refusals are never retried.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { AppError } from "../errors";
import { advanceTask } from "../jobs/advance-task";
import { writeSetting } from "../settings/operator-settings";
import { SubstrateError } from "../substrate/substrate-error";
import { listDueAutomaticRetries, retryTask } from "./retry-task";
import { transitionTask } from "../tasks/transition-task";
import { planAutomaticRetry } from "./plan-automatic-retry";
import { createLifecycleWorld, type LifecycleWorld } from "./testing/lifecycle-fixture";

let world: LifecycleWorld;

beforeAll(async () => {
  world = await createLifecycleWorld();
});

/**
 * Dispatch one task the way the queued step does. The dispatch gate (lib/probes) is not what this
 * file tests, so the task is moved past it here instead of opening the gate with a probe run.
 */
async function dispatch(taskId: string) {
  await transitionTask(world.db, { taskId, from: "queued", to: "provisioning", reason: "dispatched" });
  await advanceTask(world.ctx, taskId);
}

async function blockWithCreate500(): Promise<string> {
  const taskId = await world.createDemoTask();
  await world.substrate.admin("DELETE", "/admin/faults");
  await world.substrate.admin("POST", "/admin/faults", { verb: "create", kind: "http500", count: 1 });
  await dispatch(taskId);
  const task = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
  expect(task.state).toBe("blocked");
  return taskId;
}

describe("operator retry", () => {
  it("a task blocked by a provider 500 is retried as attempt 1 and reaches review; both attempts stay visible", async () => {
    const taskId = await blockWithCreate500();
    const before = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
    expect(before.errorCode).toBe("SUBSTRATE_INTERNAL");

    const outcome = await retryTask({ db: world.db }, { taskId, reason: "provider had a bad minute", actor: null });
    expect(outcome).toMatchObject({ attempt: 1, from: "blocked", to: "queued" });
    expect(outcome.operationId).not.toBe(before.operationId);
    const queued = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
    expect(queued).toMatchObject({
      state: "queued",
      attempt: 1,
      operationId: outcome.operationId,
      errorCode: null,
      errorSummary: null,
      autoRetryAt: null,
      deadlineAt: null,
    });

    await dispatch(taskId);
    const task = await world.db.task.findUniqueOrThrow({
      where: { id: taskId },
      include: {
        transitions: { orderBy: { id: "asc" } },
        machines: { orderBy: { createdAt: "asc" } },
        capabilities: true,
      },
    });
    expect(task.state, `${task.errorCode}: ${task.errorSummary}`).toBe("review_pending");
    // attempt 0's history is untouched; attempt 1 has its own operation
    const byAttempt = (n: number) => task.transitions.filter((t) => t.attempt === n).map((t) => t.toState);
    expect(byAttempt(0)).toEqual(["queued", "provisioning", "blocked"]);
    expect(byAttempt(1)).toEqual([
      "queued",
      "provisioning",
      "running",
      "collecting",
      "imported",
      "verifying",
      "review_pending",
    ]);
    expect(new Set(task.transitions.filter((t) => t.attempt === 1).map((t) => t.operationId))).toEqual(
      new Set([outcome.operationId]),
    );
    // a fresh guest for the new attempt (the failed create's intent stays as it ended) and a fresh capability
    const students = task.machines.filter((m) => m.purpose === "student");
    expect(students.map((m) => [m.operationId === before.operationId ? "attempt0" : "attempt1", m.state])).toEqual([
      ["attempt0", "failed"],
      ["attempt1", "destroyed"],
    ]);
    expect(task.capabilities.length).toBe(2);
    const audit = await world.db.auditLog.findFirstOrThrow({ where: { action: "task.retry", targetId: taskId } });
    expect(audit.detail).toMatchObject({
      from: "blocked",
      to: "queued",
      attempt: 1,
      previousOperationId: before.operationId,
      previousErrorCode: "SUBSTRATE_INTERNAL",
      isAutomatic: false,
    });
  });

  it("refuses a task that is not blocked or failed, and a retry without a reason", async () => {
    const taskId = await world.createDemoTask();
    await expect(retryTask({ db: world.db }, { taskId, reason: "again please", actor: null })).rejects.toMatchObject({
      code: "STATE_CONFLICT",
    });
    await expect(retryTask({ db: world.db }, { taskId, reason: "", actor: null })).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });
    await world.db.task.update({ where: { id: taskId }, data: { state: "failed" } });
  });
});

describe("automatic retry", () => {
  it("plans one retry after a transient error with backoff, retries when due, and stops at the operator's count", async () => {
    await writeSetting(
      { db: world.db },
      {
        key: "task.retry",
        value: { maxAutomaticRetries: 1, backoffSeconds: 60 },
        actor: null,
        reason: "test setup",
      },
    );
    const start = Date.now();
    const taskId = await blockWithCreate500();
    const blocked = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
    expect(blocked.autoRetryAt).not.toBeNull();
    expect(blocked.autoRetryAt!.getTime()).toBeGreaterThanOrEqual(start + 60_000);

    expect(await listDueAutomaticRetries({ db: world.db }, { now: new Date(), take: 10 })).not.toContain(taskId);
    await expect(
      retryTask({ db: world.db }, { taskId, reason: "transient", actor: null, isAutomatic: true }),
    ).rejects.toMatchObject({
      code: "STATE_CONFLICT",
    });

    const later = new Date(blocked.autoRetryAt!.getTime() + 1);
    expect(await listDueAutomaticRetries({ db: world.db }, { now: later, take: 10 })).toContain(taskId);
    await retryTask(
      { db: world.db, now: () => later },
      { taskId, reason: "transient", actor: null, isAutomatic: true },
    );
    expect(await world.db.task.findUniqueOrThrow({ where: { id: taskId } })).toMatchObject({
      state: "queued",
      attempt: 1,
      autoRetryCount: 1,
    });

    // the second transient failure is not retried automatically: the count is used up
    await world.substrate.admin("POST", "/admin/faults", { verb: "create", kind: "http500", count: 1 });
    await dispatch(taskId);
    const again = await world.db.task.findUniqueOrThrow({ where: { id: taskId } });
    expect(again).toMatchObject({ state: "blocked", autoRetryAt: null, autoRetryCount: 1 });
  });

  it("plans a retry for a running task whose guest the provider no longer knows, only before the task's deadline", async () => {
    await writeSetting(
      { db: world.db },
      {
        key: "task.retry",
        value: { maxAutomaticRetries: 2, backoffSeconds: 1 },
        actor: null,
        reason: "test setup",
      },
    );
    const lost = () =>
      new SubstrateError({ code: "SUBSTRATE_NOT_FOUND", operation: "exec", message: "machine not found", status: 404 });
    const taskId = await world.createDemoTask();
    const now = new Date();
    await world.db.task.update({
      where: { id: taskId },
      data: { state: "blocked", deadlineAt: new Date(now.getTime() - 1000) },
    });
    expect(
      await planAutomaticRetry({ db: world.db, now: () => now }, { taskId, error: lost(), failedFrom: "running" }),
    ).toBeNull();
    await world.db.task.update({ where: { id: taskId }, data: { deadlineAt: new Date(now.getTime() + 60_000) } });
    const failed = new SubstrateError({ code: "SUBSTRATE_MACHINE_FAILED", operation: "exec", message: "guest ended" });
    expect(
      await planAutomaticRetry({ db: world.db, now: () => now }, { taskId, error: failed, failedFrom: "running" }),
    ).toBeNull();
    const at = await planAutomaticRetry(
      { db: world.db, now: () => now },
      { taskId, error: lost(), failedFrom: "running" },
    );
    expect(at?.getTime()).toBe(now.getTime() + 1000);
  });

  it("never plans a retry for integrity failures or non-transient refusals", async () => {
    const taskId = await world.createDemoTask();
    await world.db.task.update({ where: { id: taskId }, data: { state: "blocked" } });
    expect(
      await planAutomaticRetry({ db: world.db }, { taskId, error: new AppError("SPEND_CEILING_EXCEEDED", "over") }),
    ).toBeNull();
    expect(
      await planAutomaticRetry(
        { db: world.db },
        {
          taskId,
          error: new SubstrateError({
            code: "SUBSTRATE_BAD_REQUEST",
            operation: "create",
            message: "bad",
            status: 400,
          }),
        },
      ),
    ).toBeNull();
    await world.db.task.update({ where: { id: taskId }, data: { state: "failed" } });
    expect(
      await planAutomaticRetry(
        { db: world.db },
        {
          taskId,
          error: new SubstrateError({ code: "SUBSTRATE_INTERNAL", operation: "create", message: "boom", status: 500 }),
        },
      ),
    ).toBeNull();
    expect((await world.db.task.findUniqueOrThrow({ where: { id: taskId } })).autoRetryAt).toBeNull();
  });
});
