/**
 * readSettingPanels on real PostgreSQL: every setting of a page with a form, in registry order, at
 * version 0 with its default until saved, then at the saved version by who saved it; a stored value
 * that no longer validates is carried as such, not thrown.
 */
import { describe, expect, it } from "vitest";
import { writeSetting } from "../settings/operator-settings";
import { settingPanelsOf } from "../settings/setting-registry";
import { createTestDatabase } from "../testing/test-database";
import { readSettingPanels } from "./setting-panels";

describe("readSettingPanels", async () => {
  const { db } = await createTestDatabase();

  it("reads the relay page's panels: defaults, then a saved version and its author, then an invalid stored value", async () => {
    const keys = settingPanelsOf("/operator/relay").map((p) => p.key);
    expect(keys).toContain("relay.pricing");
    const before = await readSettingPanels({ db }, { page: "/operator/relay" });
    expect(before.map((v) => v.panel.key)).toEqual(keys);
    const pricingOf = (views: typeof before) => views.find((v) => v.panel.key === "relay.pricing")!;
    expect(pricingOf(before)).toMatchObject({ version: 0, last: null, current: { ok: true } });

    const operator = await db.user.create({
      data: { email: "op-panels@school.invalid", name: "op", passwordHash: "x", roles: ["operator"] },
    });
    const value = { inputMicrosPerMTok: 3_000_000, outputMicrosPerMTok: 15_000_000 };
    await writeSetting(
      { db },
      {
        key: "relay.pricing",
        value,
        actor: { userId: operator.id, email: operator.email, roles: ["operator"] },
        reason: "the school's price",
        via: "web",
      },
    );
    const saved = pricingOf(await readSettingPanels({ db }, { page: "/operator/relay" }));
    expect(saved).toMatchObject({
      version: 1,
      last: { actorEmail: "op-panels@school.invalid" },
      current: { ok: true, value },
    });

    await db.operatorSetting.update({
      where: { key: "relay.pricing" },
      data: { value: { inputMicrosPerMTok: "lots" } },
    });
    expect(pricingOf(await readSettingPanels({ db }, { page: "/operator/relay" })).current).toEqual({
      ok: false,
      error: expect.any(String),
    });
  });
});
