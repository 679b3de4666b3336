/** readNewAttemptsPage on real PostgreSQL: the repositories and the agent profiles by name; nothing for a teacher. */
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readNewAttemptsPage } from "./new-attempts-page";

describe("readNewAttemptsPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("reads the repositories and the profiles, by name", async () => {
    await db.targetRepository.create({ data: { name: "demo/attempts-page", cloneUrl: "/nowhere" } });
    await db.agentProfile.createMany({
      data: [
        { name: "zed-agent", owner: "zed" },
        { name: "amy-agent", owner: "amy" },
      ],
    });
    const page = await readNewAttemptsPage(deps, { actor: OPERATOR });
    expect(page.repositories.map((r) => r.name)).toEqual(["demo/attempts-page"]);
    expect(page.profiles).toEqual([
      { name: "amy-agent", owner: "amy" },
      { name: "zed-agent", owner: "zed" },
    ]);
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readNewAttemptsPage(deps, { actor: TEACHER })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
