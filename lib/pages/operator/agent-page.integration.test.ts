/**
 * readAgentPage on real PostgreSQL: a profile, its current version, its environment as the form's
 * text and each version's dependency state; a profile's own guest image with its qualification (not
 * qualified: no probe run for it, dispatch closed); NOT_FOUND for another name and for a teacher.
 */
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readAgentPage } from "./agent-page";

describe("readAgentPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("reads the current version, its environment as KEY=value lines and each version's dependency state", async () => {
    const profile = await db.agentProfile.create({ data: { name: "alice-agent", owner: "alice", currentVersion: 2 } });
    await db.agentProfileVersion.createMany({
      data: [
        { profileId: profile.id, version: 1, command: ["node", "a.mjs"], environment: {} },
        {
          profileId: profile.id,
          version: 2,
          command: ["node", "b.mjs"],
          environment: { MODE: "fast", DEPTH: "2" },
          dependencyRecipe: "npm-ci",
          dependencyLockfileDigest: "d".repeat(64),
        },
      ],
    });
    const page = await readAgentPage(deps, { actor: OPERATOR, name: "alice-agent" });
    expect(page.profile.name).toBe("alice-agent");
    expect(page.current.version).toBe(2);
    expect(page.environmentText).toBe("MODE=fast\nDEPTH=2");
    expect(page.profile.versions.map((v) => [v.version, v.dependencies.state])).toEqual(
      expect.arrayContaining([
        [1, "none"],
        [2, "unconfigured"],
      ]),
    );
    expect(page.image).toMatchObject({ image: null, qualification: null });
    expect(page.canRunProbes).toBe(true);
  });

  it("says a profile's own guest image is not qualified while no probe run passed for it", async () => {
    const profile = await db.agentProfile.create({ data: { name: "imaged-agent", currentVersion: 1 } });
    await db.agentProfileVersion.create({
      data: {
        profileId: profile.id,
        version: 1,
        command: ["node", "a.mjs"],
        image: { type: "smolmachine", reference: "school/alt" },
      },
    });
    const page = await readAgentPage(deps, { actor: OPERATOR, name: "imaged-agent" });
    expect(page.image).toMatchObject({
      image: { type: "smolmachine", reference: "school/alt" },
      mode: "development",
      isDispatchOpen: false,
      qualification: { kind: "not_qualified" },
    });
  });

  it("is NOT_FOUND for an unknown profile and for a teacher", async () => {
    await expect(readAgentPage(deps, { actor: OPERATOR, name: "nobody-agent" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
    await expect(readAgentPage(deps, { actor: TEACHER, name: "reference-text" })).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});
