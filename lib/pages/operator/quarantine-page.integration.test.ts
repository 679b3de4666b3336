/** readQuarantinePage on real PostgreSQL: the quarantined machines; a page number that is not one is page 1; nothing for a teacher. */
import { randomUUID } from "node:crypto";
import { describe, expect, it } from "vitest";
import { createTestDatabase } from "../../testing/test-database";
import { OPERATOR, pageTestDeps, TEACHER } from "../testing/page-actors";
import { readQuarantinePage } from "./quarantine-page";

describe("readQuarantinePage", async () => {
  const { db } = await createTestDatabase();
  const deps = pageTestDeps(db);

  it("lists a quarantined machine, whatever the page parameter says", async () => {
    const machine = await db.guestMachine.create({
      data: {
        purpose: "student",
        state: "cleanup_quarantined",
        providerName: "sc-q",
        providerId: "mach-q",
        substrate: "local",
        imageRef: "smolmachine:x",
        resources: {},
        ttlSeconds: 60,
        operationId: randomUUID(),
      },
    });
    await db.quarantineRecord.create({
      data: { machineId: machine.id, providerId: "mach-q", substrate: "local", reason: "delete failed" },
    });
    for (const page of [undefined, "1", "not a number", "-3"]) {
      const read = await readQuarantinePage(deps, { actor: OPERATOR, page });
      expect(read.total).toBe(1);
      expect(read.page).toBe(1);
    }
  });

  it("is NOT_FOUND for a teacher", async () => {
    await expect(readQuarantinePage(deps, { actor: TEACHER })).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
