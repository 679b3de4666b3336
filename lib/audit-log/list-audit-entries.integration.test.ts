/**
 * The audit trail on real PostgreSQL: newest first, filtered by actor (a user or "system"), by
 * kind (the dispatch gate apart from other settings) and by date, paged; and the before/after
 * diff of a setting change.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { recordAudit } from "../audit";
import type { Db } from "../db/client";
import { writeSetting } from "../settings/operator-settings";
import { createTestDatabase } from "../testing/test-database";
import { diffValues } from "./diff-values";
import { listAuditEntries } from "./list-audit-entries";

let db: Db;
let alice: string;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  alice = (
    await db.user.create({ data: { email: "alice@audit.test", name: "alice", passwordHash: "x", roles: ["operator"] } })
  ).id;
  await writeSetting(
    { db },
    {
      key: "dispatch",
      value: { enabled: false, mode: "off", closedReason: "term ends" },
      actor: { userId: alice, email: "alice@audit.test", roles: ["operator"] },
      reason: "term starts",
    },
  );
  await writeSetting(
    { db },
    {
      key: "task.retry",
      value: { maxAutomaticRetries: 2, backoffSeconds: 30 },
      actor: { userId: alice, email: "alice@audit.test", roles: ["operator"] },
      reason: "test setup",
    },
  );
  await recordAudit(db, {
    actorId: null,
    action: "task.retry",
    targetType: "task",
    targetId: "t1",
    detail: { isAutomatic: true },
  });
  await db.auditLog.create({
    data: {
      actorId: alice,
      action: "user.create",
      targetType: "user",
      targetId: "u1",
      createdAt: new Date("2030-05-02T10:00:00Z"),
    },
  });
});

describe("listAuditEntries", () => {
  it("lists newest first with the actor's email", async () => {
    const all = await listAuditEntries({ db }, {});
    expect(all.total).toBe(4);
    expect(all.items.map((e) => e.action)).toEqual(["user.create", "task.retry", "setting.write", "setting.write"]);
    expect(all.items[1]).toMatchObject({ action: "task.retry", actorEmail: null });
    expect(all.items.find((e) => e.action === "setting.write")?.actorEmail).toBe("alice@audit.test");
  });

  it("filters by kind: the dispatch gate is its own kind, not a setting change", async () => {
    expect((await listAuditEntries({ db }, { kind: "dispatch" })).items.map((e) => e.targetId)).toEqual(["dispatch"]);
    expect((await listAuditEntries({ db }, { kind: "setting" })).items.map((e) => e.targetId)).toEqual(["task.retry"]);
    expect((await listAuditEntries({ db }, { kind: "task" })).items.map((e) => e.action)).toEqual(["task.retry"]);
  });

  it("filters by actor (system = no actor) and by date, inclusive", async () => {
    expect((await listAuditEntries({ db }, { actor: "system" })).total).toBe(1);
    expect((await listAuditEntries({ db }, { actor: alice })).total).toBe(3);
    expect(
      (await listAuditEntries({ db }, { from: "2030-05-02", to: "2030-05-02" })).items.map((e) => e.action),
    ).toEqual(["user.create"]);
  });

  it("pages, and refuses an unknown kind", async () => {
    const page = await listAuditEntries({ db }, { pageSize: 3, page: 2 });
    expect(page).toMatchObject({ total: 4, pageCount: 2 });
    expect(page.items).toHaveLength(1);
    await expect(listAuditEntries({ db }, { kind: "nope" as never })).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
    });
  });
});

describe("diffValues", () => {
  it("lists changed leaves only, with dotted paths", () => {
    expect(
      diffValues(
        { cpus: 1, relay: { maxRequests: 20, maxBytes: 5 } },
        { cpus: 1, relay: { maxRequests: 40, maxBytes: 5 }, extra: true },
      ),
    ).toEqual([
      { path: "extra", before: "—", after: "true" },
      { path: "relay.maxRequests", before: "20", after: "40" },
    ]);
    expect(diffValues(null, { enabled: true })).toEqual([
      { path: "(value)", before: "null", after: '{"enabled":true}' },
    ]);
  });
});
