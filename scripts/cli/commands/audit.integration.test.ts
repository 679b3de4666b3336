/**
 * `schoolcore audit list --json` on real PostgreSQL: the CLI reads the same trail the audit page
 * shows, with actor (by email, or "system") and kind filters; bad filters exit non-zero.
 */
import { describe, expect, it } from "vitest";
import { recordAudit } from "../../../lib/audit";
import { writeSetting } from "../../../lib/settings/operator-settings";
import { runCli } from "../../../lib/testing/run-cli";
import { createTestDatabase } from "../../../lib/testing/test-database";

describe("schoolcore audit list", async () => {
  const { db, url } = await createTestDatabase();
  const env = { DATABASE_URL: url };
  const op = await db.user.create({
    data: { email: "op@audit-cli.test", name: "op", passwordHash: "x", roles: ["operator"] },
  });
  await writeSetting(
    { db },
    {
      key: "task.retry",
      value: { maxAutomaticRetries: 3, backoffSeconds: 5 },
      actor: { userId: op.id, email: op.email, roles: ["operator"] },
      reason: "flaky provider week",
    },
  );
  await recordAudit(db, { actorId: null, action: "quarantine.release", targetType: "machine", targetId: "m1" });

  it("lists every entry as JSON, newest first, with the actor's email and the setting's before/after", async () => {
    const result = await runCli(["audit", "list", "--json"], { env });
    expect(result.stderr).toBe("");
    expect(result.code).toBe(0);
    const out = JSON.parse(result.stdout);
    expect(out.total).toBe(2);
    expect(out.items[0]).toMatchObject({ action: "quarantine.release", actorEmail: null });
    expect(out.items[1]).toMatchObject({
      action: "setting.write",
      actorEmail: "op@audit-cli.test",
      targetId: "task.retry",
      detail: { before: null, after: { maxAutomaticRetries: 3 }, reason: "flaky provider week", version: 1 },
    });
  });

  it("filters by actor email and by kind", async () => {
    const mine = JSON.parse(
      (await runCli(["audit", "list", "--actor", "op@audit-cli.test", "--json"], { env })).stdout,
    );
    expect(mine.items.map((e: { action: string }) => e.action)).toEqual(["setting.write"]);
    const quarantine = JSON.parse((await runCli(["audit", "list", "--kind", "quarantine", "--json"], { env })).stdout);
    expect(quarantine.total).toBe(1);
  });

  it("refuses an unknown actor or kind with one line", async () => {
    for (const args of [
      ["--actor", "nobody@x.test"],
      ["--kind", "nope"],
    ]) {
      const result = await runCli(["audit", "list", ...args], { env });
      expect(result.code).not.toBe(0);
      expect(result.stderr.trim().split("\n")).toHaveLength(1);
    }
  });
});
