/** readAgentsPage on real PostgreSQL: the built-in profiles are there (made at the first read), each with its current version's dependency state; nothing for a teacher. */
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readAgentsPage } from "./agents-page";

describe("readAgentsPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("lists the built-in reference agents", async () => {
    const { profiles } = await readAgentsPage(deps, { actor: OPERATOR });
    expect(profiles.map((p) => p.name)).toEqual(
      expect.arrayContaining(["reference-openai", "reference-anthropic", "reference-text"]),
    );
  });

  it("shows each profile's current version's dependency state", async () => {
    const profile = await db.agentProfile.create({ data: { name: "locked-agent", currentVersion: 2 } });
    await db.agentProfileVersion.createMany({
      data: [
        { profileId: profile.id, version: 1, command: ["node", "a.mjs"] },
        {
          profileId: profile.id,
          version: 2,
          command: ["node", "a.mjs"],
          dependencyRecipe: "pip-require-hashes",
          dependencyLockfileDigest: "e".repeat(64),
        },
      ],
    });
    const { profiles } = await readAgentsPage(deps, { actor: OPERATOR });
    expect(profiles.find((p) => p.name === "locked-agent")?.dependencies).toEqual({
      state: "unconfigured",
      recipe: "pip-require-hashes",
    });
    expect(profiles.find((p) => p.name === "reference-text")?.dependencies).toEqual({ state: "none" });
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readAgentsPage(deps, { actor: TEACHER })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
