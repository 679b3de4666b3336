/**
 * Every setting write is a new numbered version (real PostgreSQL): the version, the value, the
 * actor and the reason are kept; the audit row carries the before/after and the version; a
 * refused value writes nothing; concurrent saves of one key get distinct versions.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { Actor } from "../contract/actor";
import { DEFAULT_TASK_LIMITS } from "../contract/limits";
import type { Db } from "../db/client";
import { createTestDatabase } from "../testing/test-database";
import { readSetting, readSettingVersion, readSettingVersionValue, writeSetting } from "./operator-settings";

let db: Db;
let actorId: string;
let actor: Actor;

beforeAll(async () => {
  ({ db } = await createTestDatabase());
  actorId = (
    await db.user.create({ data: { email: "op@versions.test", name: "op", passwordHash: "x", roles: ["operator"] } })
  ).id;
  actor = { userId: actorId, email: "op@versions.test", roles: ["operator"] };
});

describe("setting versions", () => {
  it("starts at version 0 (the default) and numbers each write", async () => {
    expect(await readSettingVersion({ db }, { key: "task.limits" })).toBe(0);
    await writeSetting(
      { db },
      {
        key: "task.limits",
        value: { ...DEFAULT_TASK_LIMITS, cpus: 2 },
        actor,
        reason: "more cpu for the robotics class",
      },
    );
    await writeSetting(
      { db },
      {
        key: "task.limits",
        value: { ...DEFAULT_TASK_LIMITS, cpus: 3 },
        actor,
        reason: "even more",
      },
    );
    expect(await readSettingVersion({ db }, { key: "task.limits" })).toBe(2);
    const v1 = await readSettingVersionValue({ db }, { key: "task.limits", version: 1 });
    expect(v1).toMatchObject({
      version: 1,
      actorId,
      reason: "more cpu for the robotics class",
      value: expect.objectContaining({ cpus: 2 }),
    });
    expect((await readSetting({ db }, { key: "task.limits" })).cpus).toBe(3);
  });

  it("audits each write with its version and the before/after values", async () => {
    const rows = await db.auditLog.findMany({
      where: { action: "setting.write", targetId: "task.limits" },
      orderBy: { id: "asc" },
    });
    expect(rows.map((r) => (r.detail as { version: number }).version)).toEqual([1, 2]);
    expect(rows[0]!.detail).toMatchObject({
      before: null,
      after: { cpus: 2 },
      reason: "more cpu for the robotics class",
    });
    expect(rows[1]!.detail).toMatchObject({ before: { cpus: 2 }, after: { cpus: 3 } });
  });

  it("writes nothing for a refused value, and reports every issue", async () => {
    await expect(
      writeSetting(
        { db },
        {
          key: "task.limits",
          value: { ...DEFAULT_TASK_LIMITS, cpus: 0, memoryMb: 1 },
          actor,
          reason: "test setup",
        },
      ),
    ).rejects.toMatchObject({
      code: "VALIDATION_FAILED",
      message: expect.stringMatching(/cpus.*memoryMb/),
    });
    expect(await readSettingVersion({ db }, { key: "task.limits" })).toBe(2);
  });

  it("refuses a write without a reason, or with one under three characters, and writes nothing", async () => {
    for (const reason of ["", "  ", "ab"]) {
      await expect(
        writeSetting({ db }, { key: "task.limits", value: DEFAULT_TASK_LIMITS, actor, reason }),
      ).rejects.toMatchObject({
        code: "VALIDATION_FAILED",
        details: { fieldErrors: { reason: [expect.stringMatching(/at least 3 characters/)] } },
      });
    }
    // a bad value and a missing reason are reported together, each under its field
    await expect(
      writeSetting({ db }, { key: "task.limits", value: { ...DEFAULT_TASK_LIMITS, cpus: 0 }, actor, reason: "" }),
    ).rejects.toMatchObject({ details: { fieldErrors: { cpus: [expect.any(String)], reason: [expect.any(String)] } } });
    expect(await readSettingVersion({ db }, { key: "task.limits" })).toBe(2);
  });

  it("gives concurrent saves of one key distinct, consecutive versions", async () => {
    await Promise.all(
      [1, 2, 3, 4].map((n) =>
        writeSetting(
          { db },
          {
            key: "task.retry",
            value: { maxAutomaticRetries: n, backoffSeconds: 10 },
            actor,
            reason: "test setup",
          },
        ),
      ),
    );
    const versions = await db.settingVersion.findMany({ where: { key: "task.retry" }, orderBy: { version: "asc" } });
    expect(versions.map((v) => v.version)).toEqual([1, 2, 3, 4]);
  });
});
