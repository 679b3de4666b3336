/**
 * readReviewQueuePage on real PostgreSQL and real candidate repositories: a lone task is one entry,
 * the attempts of one issue are one entry with their comparison (at the place of the first), the
 * filters come back as applied, and an operator without review.view reads nothing.
 */
import { randomUUID } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { createAttemptFixture, type TAttemptFixture } from "../../attempts/testing/attempt-fixture";
import { parseEnv } from "../../env";
import { createReviewFixture, type TReviewFixture } from "../../review/testing/review-fixture";
import { createTestDatabase } from "../../testing/test-database";
import { readReviewQueuePage } from "./review-queue-page";

describe("readReviewQueuePage (the teacher's queue, one view model)", async () => {
  const { db } = await createTestDatabase();
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    await Promise.all(cleanups.map((cleanup) => cleanup()));
  });

  it("shows a lone task once and the attempts of one issue once, with their comparison", async () => {
    const lone: TReviewFixture = await createReviewFixture(db, { base: { "a.txt": "1\n" }, head: { "a.txt": "2\n" } });
    cleanups.push(lone.diff.cleanup);
    const group: TAttemptFixture = await createAttemptFixture(db, { attempts: 2 });
    cleanups.push(group.cleanup);
    const deps = { db, env: parseEnv({ DATA_DIR: group.attempts[0]!.diff.dataDir }) };
    const page = await readReviewQueuePage(deps, { actor: lone.reviewer });
    expect(page.isFiltered).toBe(false);
    expect(page.entries.map((e) => e.kind).sort()).toEqual(["group", "task"]);
    const groupEntry = page.entries.find((e) => e.kind === "group");
    if (groupEntry?.kind !== "group") throw new Error("no group entry");
    expect(groupEntry.comparison.group.id).toBe(group.groupId);
    expect(groupEntry.comparison.attempts.map((a) => a.taskId).sort()).toEqual(
      group.attempts.map((a) => a.taskId).sort(),
    );
    expect(page.entries.find((e) => e.kind === "task")?.item.taskId).toBe(lone.taskId);

    const filtered = await readReviewQueuePage(deps, { actor: lone.reviewer, repository: lone.diff.repository });
    expect(filtered.isFiltered).toBe(true);
    expect(filtered.entries.map((e) => e.item.taskId)).toEqual([lone.taskId]);
  });

  it("is NOT_FOUND for an actor without review.view", async () => {
    const deps = { db, env: parseEnv({ DATA_DIR: "/nonexistent" }) };
    await expect(
      readReviewQueuePage(deps, { actor: { userId: randomUUID(), email: "op@school.invalid", roles: ["operator"] } }),
    ).rejects.toMatchObject({ code: "NOT_FOUND" });
  });
});
