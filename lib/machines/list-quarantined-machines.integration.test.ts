/**
 * The quarantine page's list on real PostgreSQL: every quarantined machine, however old (not a
 * window of the newest 200), oldest first, with its recovery metadata and age; paged.
 */
import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { Db } from "../db/client";
import { createTestDatabase } from "../testing/test-database";
import { listQuarantinedMachines } from "./list-quarantined-machines";

let db: Db;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  const old = new Date("2030-01-01T00:00:00Z");
  const quarantined = await db.guestMachine.create({
    data: {
      purpose: "student",
      state: "cleanup_quarantined",
      providerName: "sc-student-old",
      providerId: "mach-old",
      substrate: "local",
      imageRef: "smolmachine:x",
      resources: {},
      ttlSeconds: 60,
      operationId: randomUUID(),
      createdAt: old,
    },
  });
  await db.quarantineRecord.create({
    data: {
      machineId: quarantined.id,
      providerId: "mach-old",
      substrate: "local",
      reason: "delete answered 500 three times",
      createdAt: old,
    },
  });
  // 250 newer machines push the old one out of any "newest 200" window
  await db.guestMachine.createMany({
    data: Array.from({ length: 250 }, (_, i) => ({
      purpose: "student" as const,
      state: "destroyed" as const,
      providerName: `sc-student-new-${i}`,
      substrate: "local",
      imageRef: "x",
      resources: {},
      ttlSeconds: 60,
      operationId: randomUUID(),
    })),
  });
});

describe("listQuarantinedMachines", () => {
  it("lists an old quarantined machine behind 250 newer ones, with reason and age", async () => {
    const result = await listQuarantinedMachines({ db, now: () => new Date("2030-01-02T00:00:00Z") });
    expect(result.total).toBe(1);
    expect(result.items[0]).toMatchObject({
      providerId: "mach-old",
      providerName: "sc-student-old",
      reason: "delete answered 500 three times",
      quarantinedSeconds: 86_400,
    });
  });
});
