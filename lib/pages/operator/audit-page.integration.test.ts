/** readAuditPage on real PostgreSQL: entries under a valid filter; an invalid filter shows everything and says so; nothing for a teacher. */
import { describe, expect, it } from "vitest";
import { recordAudit } from "../../audit";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readAuditPage } from "./audit-page";

describe("readAuditPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("filters by actor, and falls back to everything on a filter that does not parse", async () => {
    const user = await db.user.create({
      data: { email: "op-audit@school.invalid", name: "op", passwordHash: "x", roles: ["operator"] },
    });
    await recordAudit(db, {
      actorId: user.id,
      action: "user.create",
      targetType: "user",
      targetId: user.id,
      detail: {},
    });
    await recordAudit(db, { actorId: null, action: "user.create", targetType: "user", targetId: user.id, detail: {} });
    const mine = await readAuditPage(deps, { actor: OPERATOR, filter: { actor: user.id } });
    expect(mine.isFilterValid).toBe(true);
    expect(mine.query).toMatchObject({ actor: user.id });
    expect(mine.result.items).toHaveLength(1);
    expect(mine.users.map((u) => u.email)).toContain("op-audit@school.invalid");
    const invalid = await readAuditPage(deps, { actor: OPERATOR, filter: { actor: "not-a-user" } });
    expect(invalid.isFilterValid).toBe(false);
    expect(invalid.query).toEqual({});
    expect(invalid.result.items).toHaveLength(2);
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readAuditPage(deps, { actor: TEACHER, filter: {} })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
