/**
 * cancelTask on real PostgreSQL, with the real substrate client pointed at a loopback port nothing
 * listens on (a queued task has no guest to destroy): the task fails as cancelled, naming who
 * cancelled it, and the audit row carries the actor — or null for the system (the CLI).
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Actor } from "../contract/actor";
import { parseEnv } from "../env";
import { createSubstrate } from "../machines/create-substrate";
import { findFreePort } from "../testing/free-port";
import { createTestDatabase } from "../testing/test-database";
import { taskRow } from "../testing/task-row";
import { cancelTask } from "./cancel-task";

describe("cancelTask", async () => {
  const { db } = await createTestDatabase();
  const env = parseEnv({
    DATA_DIR: await mkdtemp(path.join(tmpdir(), "cancel-task-")),
    LOCAL_SUBSTRATE_PORT: String(await findFreePort()),
  });
  const substrate = createSubstrate({ db, env });
  afterAll(async () => substrate.close());
  const deps = { db, env, substrate };
  const repositoryId = (await db.targetRepository.create({ data: { name: "demo/cancel", cloneUrl: "/nowhere" } })).id;

  it("fails the task as cancelled by the signed-in actor, or by the system, and audits who", async () => {
    const user = await db.user.create({
      data: { email: "op-cancel@school.invalid", name: "op", passwordHash: "x", roles: ["operator"] },
    });
    const operator: Actor = { userId: user.id, email: user.email, roles: ["operator"] };
    for (const [actor, by] of [
      [operator, "op-cancel@school.invalid"],
      [null, "the system (the CLI)"],
    ] as const) {
      const task = await db.task.create({ data: taskRow(repositoryId, { state: "queued" }) });
      await cancelTask(deps, { taskId: task.id, actor });
      const after = await db.task.findUniqueOrThrow({ where: { id: task.id } });
      expect(after.state).toBe("failed");
      expect(after.errorSummary).toContain(`Cancelled by ${by}.`);
      const audit = await db.auditLog.findFirstOrThrow({ where: { action: "task.cancel", targetId: task.id } });
      expect(audit.actorId).toBe(actor?.userId ?? null);
    }
  });

  it("refuses a task that can no longer fail", async () => {
    const task = await db.task.create({ data: taskRow(repositoryId, { state: "failed" }) });
    await expect(cancelTask(deps, { taskId: task.id, actor: null })).rejects.toMatchObject({ code: "STATE_CONFLICT" });
  });
});
