/** readSettingsPage on real PostgreSQL: the dispatch gate, closed with no passing probe run, and whether the actor may toggle it; nothing for a teacher. */
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readSettingsPage } from "./settings-page";

describe("readSettingsPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("reads the closed gate and lets an operator toggle it", async () => {
    const page = await readSettingsPage(deps, { actor: OPERATOR });
    expect(page.dispatch.isOpen).toBe(false);
    expect(page.canToggle).toBe(true);
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readSettingsPage(deps, { actor: TEACHER })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
