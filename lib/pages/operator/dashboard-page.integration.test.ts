/**
 * readDashboardPage on real PostgreSQL, with the real substrate client pointed at a loopback port
 * nothing listens on: the dashboard still reads (the provider account is "unreachable", said as
 * such), with the newest tasks, the closed dispatch gate and the counts; nothing for a teacher.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseEnv } from "../../env";
import { createSubstrate } from "../../machines/create-substrate";
import { findFreePort } from "../../testing/free-port";
import { createTestDatabase } from "../../testing/test-database";
import { taskRow } from "../../testing/task-row";
import { OPERATOR, TEACHER } from "../testing/page-actors";
import { readDashboardPage } from "./dashboard-page";

describe("readDashboardPage", async () => {
  const { db } = await createTestDatabase();
  const env = parseEnv({
    DATA_DIR: await mkdtemp(path.join(tmpdir(), "dashboard-page-")),
    LOCAL_SUBSTRATE_PORT: String(await findFreePort()),
  });
  const substrate = createSubstrate({ db, env });
  afterAll(async () => substrate.close());
  const deps = { db, env, substrate };

  it("reads the dashboard with the provider unreachable, said as such", async () => {
    const repositoryId = (await db.targetRepository.create({ data: { name: "demo/dashboard", cloneUrl: "/nowhere" } }))
      .id;
    const task = await db.task.create({ data: taskRow(repositoryId, { state: "queued" }) });
    const page = await readDashboardPage(deps, { actor: OPERATOR });
    expect(page.tasks.items.map((t) => t.id)).toEqual([task.id]);
    expect(page.account).toMatchObject({ kind: "unreachable", label: "local" });
    expect(page.dispatch.isOpen).toBe(false);
    expect(page.spend.month).toMatch(/^\d{4}-\d{2}$/);
    expect(page.health).toBeDefined();
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readDashboardPage(deps, { actor: TEACHER })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
