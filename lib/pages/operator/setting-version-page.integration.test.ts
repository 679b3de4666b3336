/** readSettingVersionPage on real PostgreSQL: a saved version, the one before it and its author; NOT_FOUND for what is not a saved version, and for a teacher. */
import { describe, expect, it } from "vitest";
import { writeSetting } from "../../settings/operator-settings";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readSettingVersionPage } from "./setting-version-page";

describe("readSettingVersionPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("reads version 2 with version 1 before it and who saved it", async () => {
    const author = await db.user.create({
      data: { email: "op-version@school.invalid", name: "op", passwordHash: "x", roles: ["operator"] },
    });
    const write = (inputMicrosPerMTok: number) =>
      writeSetting(
        { db },
        {
          key: "relay.pricing",
          value: { inputMicrosPerMTok, outputMicrosPerMTok: 0 },
          actor: { userId: author.id, email: author.email, roles: ["operator"] },
          reason: "a new price",
          via: "web",
        },
      );
    await write(1);
    await write(2);
    const page = await readSettingVersionPage(deps, { actor: OPERATOR, key: "relay.pricing", version: "2" });
    expect(page).toMatchObject({ key: "relay.pricing", version: 2, authorEmail: "op-version@school.invalid" });
    expect(page.row.value).toEqual({ inputMicrosPerMTok: 2, outputMicrosPerMTok: 0 });
    expect(page.previous?.value).toEqual({ inputMicrosPerMTok: 1, outputMicrosPerMTok: 0 });
    expect(
      (await readSettingVersionPage(deps, { actor: OPERATOR, key: "relay.pricing", version: "1" })).previous,
    ).toBeNull();
  });

  it("is NOT_FOUND for an unknown key, a version that is not one or was never saved, and for a teacher", async () => {
    for (const [key, version] of [
      ["no.such.key", "1"],
      ["relay.pricing", "0"],
      ["relay.pricing", "1.5"],
      ["relay.pricing", "99"],
    ])
      await expect(
        readSettingVersionPage(deps, { actor: OPERATOR, key: key!, version: version! }),
      ).rejects.toMatchObject({
        code: "NOT_FOUND",
      });
    await expect(
      readSettingVersionPage(deps, { actor: TEACHER, key: "relay.pricing", version: "1" }),
    ).rejects.toMatchObject({
      code: "NOT_FOUND",
    });
  });
});
