/** readAgentsPage on real PostgreSQL: the built-in profiles are there (made at the first read); nothing for a teacher. */
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readAgentsPage } from "./agents-page";

describe("readAgentsPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("lists the built-in reference agents", async () => {
    const { profiles } = await readAgentsPage(deps, { actor: OPERATOR });
    expect(profiles.map((p) => p.name)).toEqual(expect.arrayContaining(["reference-openai", "reference-anthropic", "reference-text"]));
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readAgentsPage(deps, { actor: TEACHER })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
