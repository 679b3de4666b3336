/** readTasksPage on real PostgreSQL: the newest tasks, by state; an unknown state or a cursor that is not a date is ignored; nothing for a teacher. */
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testing/test-database";
import { taskRow } from "../../testing/task-row";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readTasksPage } from "./tasks-page";

describe("readTasksPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("filters by a known state and ignores what is not one", async () => {
    const repositoryId = (await db.targetRepository.create({ data: { name: "demo/tasks-page", cloneUrl: "/nowhere" } }))
      .id;
    const queued = await db.task.create({ data: taskRow(repositoryId, { state: "queued" }) });
    const failed = await db.task.create({ data: taskRow(repositoryId, { state: "failed" }) });
    const all = await readTasksPage(deps, { actor: OPERATOR, state: "no-such-state", before: "not a date" });
    expect(all.state).toBeUndefined();
    expect(all.items.map((t) => t.id).sort()).toEqual([queued.id, failed.id].sort());
    const onlyFailed = await readTasksPage(deps, { actor: OPERATOR, state: "failed" });
    expect(onlyFailed.state).toBe("failed");
    expect(onlyFailed.items.map((t) => t.id)).toEqual([failed.id]);
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readTasksPage(deps, { actor: TEACHER })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
