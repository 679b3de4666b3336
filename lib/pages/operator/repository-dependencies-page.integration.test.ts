/** readRepositoryDependenciesPage on real PostgreSQL: a repository with no recipe yet; NOT_FOUND for an unknown or malformed id and for a teacher. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readRepositoryDependenciesPage } from "./repository-dependencies-page";

describe("readRepositoryDependenciesPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("reads a repository's dependencies view", async () => {
    const repository = await db.targetRepository.create({
      data: { name: "demo/dependencies-page", cloneUrl: "/nowhere" },
    });
    const { view } = await readRepositoryDependenciesPage(deps, { actor: OPERATOR, repositoryId: repository.id });
    expect(view).toMatchObject({ recipe: null });
  });

  it("is NOT_FOUND for an unknown or malformed id and for a teacher", async () => {
    for (const repositoryId of [randomUUID(), "not-a-uuid"])
      await expect(readRepositoryDependenciesPage(deps, { actor: OPERATOR, repositoryId })).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
    await expect(
      readRepositoryDependenciesPage(deps, { actor: TEACHER, repositoryId: randomUUID() }),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});
