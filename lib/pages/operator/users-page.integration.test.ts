/** readUsersPage on real PostgreSQL: every account, no password hash in the view model, and the sign-in setting panel; nothing for a teacher. */
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readUsersPage } from "./users-page";

describe("readUsersPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("lists the accounts without their password hashes", async () => {
    await db.user.create({
      data: { email: "t1@school.invalid", name: "t1", passwordHash: "secret-hash", roles: ["teacher"] },
    });
    const { users, settingPanels } = await readUsersPage(deps, { actor: OPERATOR });
    expect(settingPanels.map((v) => v.panel.key)).toEqual(["auth.oidc"]);
    expect(users.map((u) => u.email)).toContain("t1@school.invalid");
    expect(JSON.stringify(users)).not.toContain("secret-hash");
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readUsersPage(deps, { actor: TEACHER })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
