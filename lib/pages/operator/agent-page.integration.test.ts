/** readAgentPage on real PostgreSQL: a profile, its current version and its environment as the form's text; NOT_FOUND for another name and for a teacher. */
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readAgentPage } from "./agent-page";

describe("readAgentPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("reads the current version and its environment as KEY=value lines", async () => {
    const profile = await db.agentProfile.create({ data: { name: "alice-agent", owner: "alice", currentVersion: 2 } });
    await db.agentProfileVersion.createMany({
      data: [
        { profileId: profile.id, version: 1, command: ["node", "a.mjs"], environment: {} },
        { profileId: profile.id, version: 2, command: ["node", "b.mjs"], environment: { MODE: "fast", DEPTH: "2" } },
      ],
    });
    const page = await readAgentPage(deps, { actor: OPERATOR, name: "alice-agent" });
    expect(page.profile.name).toBe("alice-agent");
    expect(page.current.version).toBe(2);
    expect(page.environmentText).toBe("MODE=fast\nDEPTH=2");
  });

  it("is NOT_FOUND for an unknown profile and for a teacher", async () => {
    await expect(readAgentPage(deps, { actor: OPERATOR, name: "nobody-agent" })).rejects.toMatchObject({ code: "NOT_FOUND" });
    await expect(readAgentPage(deps, { actor: TEACHER, name: "reference-text" })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
