/** readNewTaskPage on real PostgreSQL: the repositories (not a probe's throwaway ones), the limits and maxima, the agents; nothing for a teacher. */
import { describe, expect, it } from "vitest";
import { readSetting } from "../../settings/operator-settings";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readNewTaskPage } from "./new-task-page";

describe("readNewTaskPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("reads what the form offers", async () => {
    await db.targetRepository.create({ data: { name: "demo/new-task", cloneUrl: "/nowhere" } });
    const page = await readNewTaskPage(deps, { actor: OPERATOR });
    expect(page.repositories.map((r) => r.name)).toEqual(["demo/new-task"]);
    expect(page.limits).toEqual(await readSetting({ db }, { key: "task.limits" }));
    expect(page.maxima).toEqual(await readSetting({ db }, { key: "task.overrideMaxima" }));
    expect(page.agents.length).toBeGreaterThan(0);
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readNewTaskPage(deps, { actor: TEACHER })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
