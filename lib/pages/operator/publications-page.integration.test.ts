/** readPublicationsPage on real PostgreSQL: the queue and whether the actor may act on it; nothing for a teacher. */
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readPublicationsPage } from "./publications-page";

describe("readPublicationsPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("reads the queue (empty) and lets an operator manage it", async () => {
    expect(await readPublicationsPage(deps, { actor: OPERATOR })).toEqual({ items: [], canManage: true });
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readPublicationsPage(deps, { actor: TEACHER })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
