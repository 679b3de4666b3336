/** readMachinesPage on real PostgreSQL: the machines and the quarantined count; nothing for a teacher. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readMachinesPage } from "./machines-page";

describe("readMachinesPage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);
  const machine = (name: string, state: "destroyed" | "cleanup_quarantined") => ({
    purpose: "student" as const,
    state,
    providerName: name,
    substrate: "local",
    imageRef: "smolmachine:x",
    resources: {},
    ttlSeconds: 60,
    operationId: randomUUID(),
  });

  it("lists the machines and counts the quarantined ones", async () => {
    await db.guestMachine.createMany({ data: [machine("sc-a", "destroyed"), machine("sc-b", "cleanup_quarantined")] });
    const page = await readMachinesPage(deps, { actor: OPERATOR });
    expect(page.machines.map((m) => m.providerName).sort()).toEqual(["sc-a", "sc-b"]);
    expect(page.quarantinedCount).toBe(1);
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readMachinesPage(deps, { actor: TEACHER })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
