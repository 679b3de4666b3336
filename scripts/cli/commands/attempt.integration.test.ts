/**
 * `attempt show` and `results export` (issue 26) through the real CLI process against real
 * PostgreSQL: the comparison of a group as JSON, and the CSV export on stdout.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createAttemptFixture, type TAttemptFixture } from "../../../lib/attempts/testing/attempt-fixture";
import { runCli } from "../../../lib/testing/run-cli";
import { createTestDatabase } from "../../../lib/testing/test-database";

describe("schoolcore attempt / results", async () => {
  const { db, url } = await createTestDatabase();
  const fixtures: TAttemptFixture[] = [];
  afterAll(async () => {
    await Promise.all(fixtures.map((f) => f.cleanup()));
  });

  it("attempt show --json compares the group's attempts; results export prints one CSV row per task", async () => {
    const f = await createAttemptFixture(db, { attempts: 2 });
    fixtures.push(f);
    const env = { DATABASE_URL: url, DATA_DIR: f.attempts[0]!.diff.dataDir };
    const show = await runCli(["attempt", "show", "--group", f.groupId, "--json"], { env });
    expect(show.code, show.stderr).toBe(0);
    const comparison = JSON.parse(show.stdout);
    expect(comparison.group).toMatchObject({ id: f.groupId, chosenTaskId: null });
    expect(comparison.attempts.map((a: { taskId: string }) => a.taskId).sort()).toEqual(
      f.attempts.map((a) => a.taskId).sort(),
    );
    expect(comparison.attempts[0]).toMatchObject({
      state: "review_pending",
      rounds: 1,
      checksPassed: 0,
      checksFailed: 0,
    });

    const exported = await runCli(["results", "export", "--format", "csv"], { env });
    expect(exported.code, exported.stderr).toBe(0);
    const lines = exported.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^"task_id","repository","issue","agent","owner","profile_version"/);
    for (const attempt of f.attempts) expect(lines.some((l) => l.startsWith(`"${attempt.taskId}"`))).toBe(true);

    const refused = await runCli(["results", "export", "--format", "xlsx"], { env });
    expect(refused.code).not.toBe(0);
  });
});
