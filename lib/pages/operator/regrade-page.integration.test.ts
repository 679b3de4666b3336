/** readRegradePage on real PostgreSQL: the repository with no regrade yet; NOT_FOUND for an id that is not a repository's and for a teacher. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readRegradePage } from "./regrade-page";

describe("readRegradePage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("reads the repository and, before any regrade, no summary", async () => {
    const repository = await db.targetRepository.create({ data: { name: "demo/regrade-page", cloneUrl: "/nowhere" } });
    const page = await readRegradePage(deps, { actor: OPERATOR, repositoryId: repository.id });
    expect(page.repository.name).toBe("demo/regrade-page");
    expect(page.summary).toBeNull();
  });

  it("is NOT_FOUND for an unknown or malformed id and for a teacher", async () => {
    for (const repositoryId of [randomUUID(), "../x"])
      await expect(readRegradePage(deps, { actor: OPERATOR, repositoryId })).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
    await expect(readRegradePage(deps, { actor: TEACHER, repositoryId: randomUUID() })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});
