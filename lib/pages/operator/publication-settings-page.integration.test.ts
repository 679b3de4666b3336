/** readPublicationSettingsPage on real PostgreSQL: the page's setting panels (lib/pages/setting-panels tests their content); nothing for a teacher. */
import { describe, expect, it } from "vitest";
import { settingPanelsOf } from "../../settings/setting-registry";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readPublicationSettingsPage } from "./publication-settings-page";

describe("readPublicationSettingsPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("reads every setting panel of /operator/publication", async () => {
    const { settingPanels } = await readPublicationSettingsPage(deps, { actor: OPERATOR });
    expect(settingPanels.map((v) => v.panel.key)).toEqual(settingPanelsOf("/operator/publication").map((p) => p.key));
    expect(settingPanels.length).toBeGreaterThan(0);
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readPublicationSettingsPage(deps, { actor: TEACHER })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
