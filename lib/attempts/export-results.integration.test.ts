/**
 * The results export (issue 26) against real PostgreSQL: one row per task with the agreed columns,
 * the decision and approver of each attempt (not_chosen ones named with the approver of the
 * chosen one), relay token and cost sums, filters by repository and day, and fields a student
 * writes neutralised against spreadsheet formula injection.
 */
import { createHash, randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { decideCandidate } from "../review/decide-candidate";
import { readReviewInsights } from "../review/read-review-insights";
import { writeSetting } from "../settings/operator-settings";
import { createTestDatabase } from "../testing/test-database";
import { exportResults, RESULTS_CSV_HEADER } from "./export-results";
import { createAttemptFixture, type TAttemptFixture } from "./testing/attempt-fixture";

/** A minimal RFC 4180 reader for the test: every field is quoted by the writer. */
function parseCsv(text: string): string[][] {
  return text
    .trimEnd()
    .split("\n")
    .map((line) => [...line.matchAll(/"((?:[^"]|"")*)"/g)].map((m) => m[1]!.replace(/""/g, '"')));
}

describe("exportResults", async () => {
  const { db } = await createTestDatabase();
  const fixtures: TAttemptFixture[] = [];
  afterAll(async () => {
    await Promise.all(fixtures.map((f) => f.cleanup()));
  });

  it("writes one row per task with the agreed columns, decisions, approvers, token and cost sums; filters; neutralises formulas", async () => {
    const f = await createAttemptFixture(db, { attempts: 2 });
    fixtures.push(f);
    const [a, b] = f.attempts as [TAttemptFixture["attempts"][0], TAttemptFixture["attempts"][0]];
    // Attempt b's profile owner is text a student chose: a formula.
    const bTask = await db.task.findUniqueOrThrow({ where: { id: b.taskId }, include: { agentProfileVersion: true } });
    await db.agentProfile.update({
      where: { id: bTask.agentProfileVersion!.profileId },
      data: { owner: '=HYPERLINK("http://x")' },
    });
    const capability = await db.relayCapability.create({
      data: {
        taskId: a.taskId,
        handleHash: createHash("sha256").update(randomBytes(32)).digest("hex"),
        allowedOps: ["complete"],
        maxRequests: 10,
        maxBytes: 1000n,
        maxRequestBytes: 100,
        maxResponseBytes: 100,
        deadlineAt: new Date(Date.now() + 3_600_000),
      },
    });
    for (const [input, output, cost] of [
      [100, 20, 1500n],
      [50, 5, 500n],
    ] as const)
      await db.relayCall.create({
        data: {
          capabilityId: capability.id,
          channel: "http",
          operation: "complete",
          outcome: "ok",
          requestBytes: 10,
          inputTokens: input,
          outputTokens: output,
          costMicros: cost,
        },
      });
    await decideCandidate(
      { db, dataDir: a.diff.dataDir },
      { actor: a.reviewer, ...a.tuple, verdict: "approve", comment: "the best one" },
    );

    const all = parseCsv((await exportResults({ db }, { format: "csv" })).csv);
    expect(all[0]).toEqual([...RESULTS_CSV_HEADER]);
    const rowOf = (taskId: string) =>
      Object.fromEntries(RESULTS_CSV_HEADER.map((h, i) => [h, all.find((r) => r[0] === taskId)![i]]));
    expect(rowOf(a.taskId)).toMatchObject({
      repository: expect.stringMatching(/^school\/review-/),
      issue: "3",
      agent: a.agent,
      profile_version: "1",
      rounds: "1",
      checks_passed: "0",
      checks_failed: "0",
      decision: "approve",
      decided_by: a.reviewer.email,
      input_tokens: "150",
      output_tokens: "25",
      cost_usd: "0.002000",
    });
    expect(rowOf(a.taskId).decided_at).toMatch(/^\d{4}-\d{2}-\d{2}T/);
    expect(rowOf(b.taskId)).toMatchObject({
      decision: "not_chosen",
      decided_by: a.reviewer.email,
      owner: '\'=HYPERLINK("http://x")',
    });

    // Insights per agent profile: a's profile approved its one decided attempt; b's was never decided on its own.
    const insights = await readReviewInsights({ db }, { days: 0 });
    expect(insights.byProfile.find((r) => r.key === a.agent)).toMatchObject({
      tasks: 1,
      decided: 1,
      approved: 1,
      approvalRate: 1,
      firstRoundApprovalRate: 1,
    });
    expect(insights.byProfile.find((r) => r.key === a.agent)?.inputTokensPerApproved).toBe(150);
    expect(insights.byProfile.find((r) => r.key === b.agent)).toMatchObject({
      tasks: 1,
      decided: 0,
      approved: 0,
      approvalRate: null,
    });

    const repository = rowOf(a.taskId).repository!;
    const filtered = parseCsv((await exportResults({ db }, { repository })).csv);
    expect(filtered.slice(1).map((r) => r[0])).toEqual([a.taskId]);
    const today = new Date().toISOString().slice(0, 10);
    const tomorrow = new Date(Date.now() + 86_400_000).toISOString().slice(0, 10);
    expect(parseCsv((await exportResults({ db }, { repository, from: today, to: today })).csv)).toHaveLength(2);
    expect(parseCsv((await exportResults({ db }, { repository, from: tomorrow })).csv)).toHaveLength(1);
    await expect(exportResults({ db }, { from: "yesterday" })).rejects.toMatchObject({ code: "VALIDATION_FAILED" });
  });

  it("anonymous review hides the owner of an attempt not yet decided", async () => {
    const f = await createAttemptFixture(db, { attempts: 2 });
    fixtures.push(f);
    await writeSetting(
      { db },
      { key: "review.anonymous", value: { enabled: true }, actor: null, reason: "test setup" },
    );
    try {
      const rows = parseCsv((await exportResults({ db }, {})).csv);
      const owner = RESULTS_CSV_HEADER.indexOf("owner");
      for (const attempt of f.attempts)
        expect(rows.find((r) => r[0] === attempt.taskId)![owner]).toBe("(hidden until decided)");
    } finally {
      await writeSetting(
        { db },
        {
          key: "review.anonymous",
          value: { enabled: false },
          actor: null,
          reason: "test setup",
        },
      );
    }
  });
});
