import fs from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { writeSetting } from "../settings/operator-settings";
import { createTestDatabase } from "../testing/test-database";
import { decideCandidate } from "./decide-candidate";
import { DEFAULT_DIFF_LIMITS } from "./read-candidate-diff.schema";
import { createReviewFixture, type TReviewFixture } from "./testing/review-fixture";

describe("decideCandidate", async () => {
  const { db } = await createTestDatabase();
  const fixtures: TReviewFixture[] = [];
  afterAll(async () => {
    await Promise.all(fixtures.map((f) => f.diff.cleanup()));
  });
  async function fixture(head: Record<string, string>): Promise<TReviewFixture> {
    const created = await createReviewFixture(db, { base: { "README.md": "base\n" }, head: { "README.md": "base\n", ...head } });
    fixtures.push(created);
    return created;
  }
  const decide = (f: TReviewFixture, actor: TReviewFixture["reviewer"], verdict: "approve" | "reject" | "request_changes") =>
    decideCandidate({ db, dataDir: f.diff.dataDir }, { actor, ...f.tuple, verdict, comment: `${verdict} by test` });
  // One file over the page's per-file line cap: the page would cut it.
  const longFile = Array.from({ length: DEFAULT_DIFF_LIMITS.maxLinesPerFile + 50 }, (_, i) => `line ${i}`).join("\n") + "\n";

  it("approves a complete diff with passing evidence (the refusals below are not vacuous)", async () => {
    const f = await fixture({ "src/a.ts": "export const a = 1;\n" });
    expect((await decide(f, f.reviewer, "approve")).verdict).toBe("approve");
    expect((await db.task.findUniqueOrThrow({ where: { id: f.taskId } })).state).toBe("approved");
  });

  it("refuses approval of a diff the page would show truncated; request changes still works", async () => {
    const f = await fixture({ "src/long.txt": longFile });
    await expect(decide(f, f.reviewer, "approve")).rejects.toMatchObject({ code: "REVIEW_DIFF_INCOMPLETE" });
    expect((await db.task.findUniqueOrThrow({ where: { id: f.taskId } })).state).toBe("review_pending");
    expect((await decide(f, f.reviewer, "request_changes")).verdict).toBe("request_changes");
  });

  it("refuses approval of a diff that cannot be read; reject still works", async () => {
    const f = await fixture({ "src/b.ts": "export const b = 2;\n" });
    await fs.rm(f.diff.gitDir, { recursive: true, force: true });
    await expect(decide(f, f.reviewer, "approve")).rejects.toMatchObject({ code: "REVIEW_DIFF_INCOMPLETE" });
    expect((await decide(f, f.reviewer, "reject")).verdict).toBe("reject");
  });

  it("separation of duties: the task's creator may not approve it, may still request changes, and the operator can turn the rule off", async () => {
    const f = await fixture({ "src/c.ts": "export const c = 3;\n" });
    await expect(decide(f, f.creator, "approve")).rejects.toMatchObject({ code: "REVIEW_SELF_APPROVAL" });
    expect((await db.task.findUniqueOrThrow({ where: { id: f.taskId } })).state).toBe("review_pending");

    const g = await fixture({ "src/d.ts": "export const d = 4;\n" });
    await writeSetting(db, { key: "review.separationOfDuties", value: { enabled: false }, actorId: null });
    try {
      expect((await decide(g, g.creator, "approve")).verdict).toBe("approve");
    } finally {
      await writeSetting(db, { key: "review.separationOfDuties", value: { enabled: true }, actorId: null });
    }
    expect((await decide(f, f.creator, "request_changes")).verdict).toBe("request_changes");
  });
});
