/** readRepositoriesPage on real PostgreSQL: the repositories and the protected paths setting; nothing for a teacher. */
import { describe, expect, it } from "vitest";
import { readSetting } from "../../settings/operator-settings";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readRepositoriesPage } from "./repositories-page";

describe("readRepositoriesPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("reads the repositories and the protected paths", async () => {
    await db.targetRepository.create({ data: { name: "demo/repositories-page", cloneUrl: "/nowhere" } });
    const page = await readRepositoriesPage(deps, { actor: OPERATOR });
    expect(page.repositories.map((r) => r.name)).toContain("demo/repositories-page");
    expect(page.protectedPaths).toEqual(await readSetting({ db }, { key: "publish.protectedPaths" }));
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readRepositoriesPage(deps, { actor: TEACHER })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
