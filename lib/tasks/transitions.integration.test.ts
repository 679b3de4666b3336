import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../testing/test-database";
import { transitionMachine } from "../machines/transition-machine";
import { transitionTask } from "./transition-task";
import { taskRow } from "../testing/task-row";

describe("durable transitions", async () => {
  const { db } = await createTestDatabase();
  const repo = await db.targetRepository.create({ data: { name: "demo/transitions", cloneUrl: "file:///nowhere" } });
  const newTask = () => db.task.create({ data: taskRow(repo.id) });

  it("moves with compare-and-set and writes one log row per transition", async () => {
    const task = await newTask();
    await transitionTask(db, { taskId: task.id, from: "queued", to: "provisioning", reason: "dispatch" });
    const log = await db.taskTransition.findMany({ where: { taskId: task.id } });
    expect(log).toMatchObject([
      { fromState: "queued", toState: "provisioning", operationId: task.operationId, attempt: 0, reason: "dispatch" },
    ]);
  });

  it("refuses when the task is not in the expected state, and logs nothing", async () => {
    const task = await newTask();
    await expect(transitionTask(db, { taskId: task.id, from: "running", to: "collecting" })).rejects.toMatchObject({
      code: "STATE_CONFLICT",
    });
    expect(await db.taskTransition.count({ where: { taskId: task.id } })).toBe(0);
  });

  it("refuses an illegal move even when the state matches", async () => {
    const task = await newTask();
    await expect(transitionTask(db, { taskId: task.id, from: "queued", to: "approved" })).rejects.toMatchObject({
      code: "STATE_CONFLICT",
    });
  });

  it("two racing transitions from the same state: exactly one wins", async () => {
    const task = await newTask();
    const results = await Promise.allSettled([
      transitionTask(db, { taskId: task.id, from: "queued", to: "provisioning" }),
      transitionTask(db, { taskId: task.id, from: "queued", to: "failed", reason: "cancelled" }),
    ]);
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(1);
    expect(await db.taskTransition.count({ where: { taskId: task.id } })).toBe(1);
  });

  it("a failure records a bounded, redacted reason on the task", async () => {
    const task = await newTask();
    await transitionTask(db, {
      taskId: task.id,
      from: "queued",
      to: "blocked",
      reason: `token smk_secretsecret ${"x".repeat(10_000)}`,
      errorCode: "SUBSTRATE_FAILED",
    });
    const stored = await db.task.findUniqueOrThrow({ where: { id: task.id } });
    expect(stored.errorCode).toBe("SUBSTRATE_FAILED");
    expect(Buffer.byteLength(stored.errorSummary!)).toBeLessThanOrEqual(2048);
    expect(stored.errorSummary).not.toContain("smk_secretsecret");
  });

  it("machine transitions are guarded the same way", async () => {
    const task = await newTask();
    const machine = await db.guestMachine.create({
      data: {
        taskId: task.id,
        purpose: "student",
        providerName: `sc-${randomUUID()}`,
        substrate: "local",
        imageRef: "img",
        resources: {},
        ttlSeconds: 60,
        operationId: task.operationId,
      },
    });
    await transitionMachine(db, {
      machineId: machine.id,
      from: "requested",
      to: "created",
      data: { providerId: "mach-1" },
    });
    await expect(
      transitionMachine(db, { machineId: machine.id, from: "requested", to: "created" }),
    ).rejects.toMatchObject({
      code: "STATE_CONFLICT",
    });
    await expect(
      transitionMachine(db, { machineId: machine.id, from: "created", to: "exported" }),
    ).rejects.toMatchObject({
      code: "STATE_CONFLICT",
    });
    expect((await db.guestMachine.findUniqueOrThrow({ where: { id: machine.id } })).providerId).toBe("mach-1");
    expect(await db.machineTransition.count({ where: { machineId: machine.id } })).toBe(1);
  });
});
